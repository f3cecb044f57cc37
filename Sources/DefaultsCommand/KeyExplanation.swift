import DefaultsSchema
import Foundation

/// What `defaults explain --json` prints: every layer a read of one key passes through, the
/// lowest first, and the one a program reads. The field names are stable; fields may be added.
///
/// ```json
/// {
///   "domain": "com.example.app", "key": "fontSize",
///   "schema": "/home/me/.local/share/defaults/schemas/com.example.app.json",
///   "type": "integer", "swiftType": "Swift.Int",
///   "layers": [
///     {"layer": "default", "file": "/home/me/.local/share/defaults/schemas/com.example.app.json",
///      "value": {"integer": 12}, "text": "12", "isRead": false},
///     {"layer": "user", "file": "/home/me/.config/com.example.app.plist", "line": 5,
///      "value": {"integer": 16}, "text": "16", "isRead": true},
///     {"layer": "managed", "file": "/etc/xdg/managed/com.example.app.plist", "line": 4,
///      "value": {"string": "big"}, "text": "big", "isRead": false,
///      "ignored": "expected integer, found string"}
///   ],
///   "writable": false,
///   "notWritableBecause": "managed by the administrator in /etc/xdg/managed/com.example.app.plist",
///   "problems": []
/// }
/// ```
struct KeyExplanation: Codable, Equatable {
    /// The domain as named on the command line (`NSGlobalDomain` for the global domain).
    var domain: String
    var key: String
    /// The schema file; absent when the domain has none (then there is no default layer and
    /// no value is checked).
    var schema: String?
    /// The schema's stored type of the key (`integer`, `float`, `string`…), when it tells one.
    var type: String?
    /// The schema's Swift type of the key.
    var swiftType: String?
    /// Every layer holding the key, the lowest precedence first: `default`, the `vendor` files
    /// (the last directory of `XDG_CONFIG_DIRS` first), `user`, the `managed` files (likewise).
    var layers: [Layer]
    /// Whether a write of the key would be read.
    var writable: Bool
    /// Why not, when ``writable`` is false.
    var notWritableBecause: String?
    /// Administrator files that were ignored (unreadable, not trusted), with the reason.
    var problems: [String]

    struct Layer: Codable, Equatable {
        /// `default`, `vendor`, `user` or `managed`.
        var layer: String
        /// The file: the schema for `default`, the property-list file for the others.
        var file: String?
        /// The 1-based line of the key in an XML property list; absent when it is not known.
        var line: Int?
        /// Whether the file is a binary property list, which has no lines.
        var binary: Bool?
        /// The value, written as a schema writes values (`{"integer": 12}`); absent for a
        /// default computed when read.
        var value: SchemaValue?
        /// The value as `defaults read` prints it.
        var text: String
        /// Whether this is the value a program reads.
        var isRead: Bool
        /// Why a read passes over this layer (`expected integer, found string`; for the default,
        /// that it does not fit its own key: the schema contradicts itself, and a program reads the
        /// default compiled into it); absent when it does not.
        var ignored: String?
        /// How the value disagrees with the schema without being passed over (outside the
        /// allowed values), absent when it does not.
        var problem: String?
        /// For the `user` layer of a synced key: what the suite's sync journal records.
        var sync: Sync?
    }

    /// What a suite's sync journal (`.defaults-sync/<domain>.plist` beside the user's file)
    /// records of the key.
    struct Sync: Codable, Equatable {
        /// When the recorded version was written, ISO 8601; absent when unknown.
        var writtenAt: String?
        /// The identifier of the writing process's clock (the journal does not name machines).
        var writer: String
        /// Whether it is a change of this machine pushed at a syncing program's next push.
        var pending: Bool
        /// Why a change of this machine not on the store is not pushed now (the store refused
        /// it, or the administrator manages the key); absent otherwise.
        var setAside: String?
        /// Whether the recorded version is the value the user's file holds.
        var matchesValue: Bool
    }
}
