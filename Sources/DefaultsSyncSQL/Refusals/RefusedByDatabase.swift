import PostgresNIO

/// A record PostgreSQL refused on its own: a data exception (SQLSTATE class 22, such as an invalid
/// byte sequence), an integrity constraint (23) or a program limit (54, such as an index row's
/// size). Trying again would fail again: the record is refused by name, never retried.
public struct RefusedByDatabase: Error, CustomStringConvertible, Sendable {
    /// Why, for people: the server's message and its SQLSTATE.
    public let description: String

    /// The refusal `error` is or holds (the error of a transaction whose body or commit failed
    /// with one), or `nil` for any other error.
    public init?(_ error: any Error) {
        guard let description = Self.reason(for: error) else { return nil }
        self.description = description
    }

    private static func reason(for error: any Error) -> String? {
        if let refusal = error as? RefusedByDatabase {
            return refusal.description
        }
        if let transaction = error as? PostgresTransactionError {
            return (transaction.closureError ?? transaction.commitError).flatMap(reason(for:))
        }
        guard let error = error as? PSQLError, error.code == .server, let state = error.serverInfo?[.sqlState],
            ["22", "23", "54"].contains(String(state.prefix(2)))
        else { return nil }
        return "the database refused it: \(error.serverInfo?[.message] ?? "an error") (SQLSTATE \(state))"
    }

    /// Runs `push` without savepoints (`false`) and, when PostgreSQL refused one of its records
    /// (which lost the transaction), once more with a savepoint around each record (`true`), so
    /// that the refused records are refused alone. Savepoints cost two round trips a record, so
    /// they are taken only then.
    public static func retrying<Result>(_ push: (_ savepoints: Bool) async throws -> Result) async throws -> Result {
        do {
            return try await push(false)
        } catch let error where RefusedByDatabase(error) != nil {
            return try await push(true)
        }
    }
}
