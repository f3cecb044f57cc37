import DefaultsCommandCore
import DefaultsPropertyList
import DefaultsSchema
import Foundation

/// One key as the editor's page shows it: what the schema says of it, the value a program reads
/// and where from, and whether it can be written. The page's JSON; its field names are the
/// contract between the server and `app.js`.
package struct EditorEntry: Codable, Equatable, Sendable {
    package var name: String
    /// Whether the domain's schema declares the key.
    package var inSchema: Bool
    package var description: String?
    /// The schema's stored type (`integer`, `float`, …); for a key the schema does not declare,
    /// the stored value's.
    package var type: String?
    package var swiftType: String?
    /// The schema's default as text (`12`, `none`, `computed when read`); `nil` without a schema.
    package var defaultText: String?
    package var allowed: Allowed?
    /// The value a program reads, as `defaults read` prints it.
    package var value: String?
    /// The text an edit control starts from, which the server reads back as the same value
    /// (``EditorValueText``).
    package var editText: String?
    /// The value's text is longer than ``EditorValueText/textLimit``: ``value`` is cut short and
    /// there is no ``editText``; the page shows it and does not edit it.
    package var tooLargeToEdit: Bool?
    /// The layer read: `vendor`, `user` or `managed`; `default` when only the schema's default is.
    package var source: String?
    package var sourceFile: String?
    /// Whether the user's file holds a value of the key.
    package var modified: Bool
    /// Names the user's value, for a write to find out that it changed since the page read it.
    package var fingerprint: String?
    package var writable: Bool
    package var notWritableBecause: String?
    /// Every file holding the key, the lowest precedence first.
    package var layers: [Layer]
    /// How the value read disagrees with the schema's allowed values.
    package var problem: String?
    /// Whether the key syncs between machines.
    package var syncs: Bool

    package struct Allowed: Codable, Equatable, Sendable {
        package var summary: String
        package var lower: String?
        package var upper: String?
        package var choices: [String]?
    }

    package struct Layer: Codable, Equatable, Sendable {
        package var layer: String
        package var file: String
        package var text: String
        package var isRead: Bool
        /// Why a read passes over this layer.
        package var ignored: String?
    }
}
