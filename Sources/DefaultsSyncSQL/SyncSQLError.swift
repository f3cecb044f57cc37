/// A problem of the SQL layer (a database URL that cannot be read, a schema newer than the
/// program), described without credentials.
public struct SyncSQLError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, for people.
    public let description: String

    /// Creates an error with a description.
    public init(_ description: String) {
        self.description = description
    }
}
