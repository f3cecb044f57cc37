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
package struct KeyExplanation: Codable, Equatable {
    /// The domain as named on the command line (`NSGlobalDomain` for the global domain).
    package var domain: String
    package var key: String
    /// The schema file; absent when the domain has none (then there is no default layer and
    /// no value is checked).
    package var schema: String?
    /// The schema's stored type of the key (`integer`, `float`, `string`…), when it tells one.
    package var type: String?
    /// The schema's Swift type of the key.
    package var swiftType: String?
    /// Every layer holding the key, the lowest precedence first: `default`, the `vendor` files
    /// (the last directory of `XDG_CONFIG_DIRS` first), `user`, the `managed` files (likewise).
    package var layers: [Layer]
    /// Whether a write of the key would be read.
    package var writable: Bool
    /// Why not, when ``writable`` is false.
    package var notWritableBecause: String?
    /// Administrator files that were ignored (unreadable, not trusted), with the reason.
    package var problems: [String]

    package struct Layer: Codable, Equatable {
        /// `default`, `vendor`, `user` or `managed`.
        package var layer: String
        /// The file: the schema for `default`, the property-list file for the others.
        package var file: String?
        /// The 1-based line of the key in an XML property list; absent when it is not known.
        package var line: Int?
        /// Whether the file is a binary property list, which has no lines.
        package var binary: Bool?
        /// The value, written as a schema writes values (`{"integer": 12}`); absent for a
        /// default computed when read.
        package var value: SchemaValue?
        /// The value as `defaults read` prints it.
        package var text: String
        /// Whether this is the value a program reads.
        package var isRead: Bool
        /// Why a read passes over this layer (`expected integer, found string`; for the default,
        /// that it does not fit its own key: the schema contradicts itself, and a program reads the
        /// default compiled into it); absent when it does not.
        package var ignored: String?
        /// How the value disagrees with the schema without being passed over (outside the
        /// allowed values), absent when it does not.
        package var problem: String?
        /// For the `user` layer of a synced key: what the suite's sync journal records.
        package var sync: Sync?
    }

    /// What a suite's sync journal (`.defaults-sync/<domain>.plist` beside the user's file)
    /// records of the key.
    package struct Sync: Codable, Equatable {
        /// When the recorded version was written, ISO 8601; absent when unknown.
        package var writtenAt: String?
        /// The identifier of the writing process's clock (the journal does not name machines).
        package var writer: String
        /// Whether it is a change of this machine pushed at a syncing program's next push.
        package var pending: Bool
        /// Why a change of this machine not on the store is not pushed now (the store refused
        /// it, or the administrator manages the key); absent otherwise.
        package var setAside: String?
        /// Whether the recorded version is the value the user's file holds.
        package var matchesValue: Bool
    }
}
