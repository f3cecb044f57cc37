import Logging
import PostgresNIO
import Synchronization

/// A statement whose text is fixed by its type, its values all bound: PostgreSQL parses and
/// analyses it once on each connection that runs it (a prepared statement named after the type),
/// not on every run as it does an unnamed one, and plans it once when a plan for every value
/// (a generic plan) costs no more than its first runs' own.
///
/// What runs on every push is written this way: parsing, analysing and planning its text took as
/// long in PostgreSQL as running it. The statement is named by the type's full name (module and
/// type, no more than 63 bytes: PostgreSQL tells names apart by those), so the type is not
/// `private`, whose name holds an address.
public protocol FixedStatement: Sendable {
    /// The text, with a placeholder (`$1`, `$2`, ...) for every value.
    static var sql: String { get }
}

extension PostgresConnection {
    /// Runs `statement` with `bindings` (one value for each of its placeholders, in order),
    /// preparing it on this connection the first time, and returns its rows.
    ///
    /// A failure of PostgreSQL's other than a refusal of the values (``RefusedByDatabase``) closes
    /// the connection, so that its pool opens another: PostgresNIO keeps a statement whose
    /// preparation failed (a lock or statement timeout, a cancel) failed for the connection's life.
    public func run<Statement: FixedStatement>(
        _ statement: Statement.Type, _ bindings: PostgresBindings, logger: Logger
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, PostgresRow> {
        do {
            return try await execute(Prepared<Statement>(bindings: bindings), logger: logger)
        } catch let error as PSQLError where error.code == .server && RefusedByDatabase(error) == nil {
            try? await close()
            throw error
        }
    }
}

/// PostgresNIO's prepared statement for a ``FixedStatement``: its rows as they come.
private struct Prepared<Statement: FixedStatement>: PostgresPreparedStatement {
    typealias Row = PostgresRow
    /// The type's full name, found once: PostgresNIO asks for it on every run, and spelling a type
    /// out took 1.4 % of a sync server's CPU (Benchmarks/README.md, P11's profile).
    static var name: String {
        let type = ObjectIdentifier(Statement.self)
        if let name = preparedNames.withLock({ $0[type] }) { return name }
        let name = String(reflecting: Statement.self)
        preparedNames.withLock { $0[type] = name }
        return name
    }
    static var sql: String { Statement.sql }
    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

/// ``Prepared``'s names, by statement type (a generic type has no stored static property).
private let preparedNames = Mutex<[ObjectIdentifier: String]>([:])
