/// The property-list type a key's value is stored as, named as `defaults read-type` prints it.
public enum StoredType: String, Sendable, Hashable, Codable, CaseIterable {
    case string
    case integer
    /// A floating-point number (`real` in an XML property list).
    case real = "float"
    case boolean
    case date
    case data
    case array
    case dictionary

    /// The type's name with an article, for messages: `an integer`, `a string`.
    public var withArticle: String {
        switch self {
        case .integer, .array: "an \(rawValue)"
        default: "a \(rawValue)"
        }
    }
}
