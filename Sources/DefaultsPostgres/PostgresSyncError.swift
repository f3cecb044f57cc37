import DefaultsSyncSQL
import Foundation
import PostgresNIO

/// A problem of ``PostgresSyncStore``, described without credentials.
public struct PostgresSyncError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, for people.
    public let description: String

    /// Creates an error with a description.
    public init(_ description: String) {
        self.description = description
    }

    static let notConnected = PostgresSyncError("not connected to the PostgreSQL server")

    /// Describes an error of PostgresNIO clearly: the server's own message when it sent one
    /// (a refused password, a missing database), else what failed.
    ///
    /// PostgresNIO's own description is deliberately generic; its details (the query, the
    /// server's fields) hold no credentials, but the password is never part of them either way.
    init(_ error: any Error, endpoint: String) {
        if let error = error as? PostgresSyncError {
            self = error  // already names the server
            return
        }
        if let error = error as? SyncSQLError {
            self.init("\(endpoint): \(error.description)")
            return
        }
        if let transaction = error as? PostgresTransactionError,
            let cause = transaction.beginError ?? transaction.closureError ?? transaction.commitError
        {
            self.init(cause, endpoint: endpoint)
            return
        }
        guard let error = error as? PSQLError else {
            self.init("\(endpoint): \(error)")
            return
        }
        if let message = error.serverInfo?[.message] {
            let code = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            self.init("\(endpoint): the server refused: \(message)\(code)")
            return
        }
        switch error.code {
        case .connectionError:
            self.init("\(endpoint): cannot connect: \(error.underlying.map { "\($0)" } ?? "connection failed")")
        case .serverClosedConnection, .uncleanShutdown:
            self.init("\(endpoint): the server closed the connection")
        case .sslUnsupported:
            self.init("\(endpoint): the server does not offer TLS, which the configuration requires")
        case .authMechanismRequiresPassword:
            self.init("\(endpoint): the server asks for a password and the URL gives none")
        default:
            self.init("\(endpoint): \(error.code)")
        }
    }
}
