import DefaultsSyncProtocol
import Foundation
import Logging
import PostgresNIO

/// One owner's rows of a ``SyncTable``, and every statement either backend runs on them: the
/// upsert, the versions, the records, the changes after a number and the latest number.
///
/// Each runs on the connection it is given, inside whatever transaction the caller holds (the
/// sync service's declares its owner first, for row-level security). Every value is bound.
public struct SyncRows: Sendable {
    public let table: SyncTable
    /// A value for each of the table's owner columns, in order (``SyncTable/store(namespace:)``,
    /// ``SyncTable/service(user:namespace:)``).
    public let owner: [String]

    /// The columns a record is read from, in ``record(from:)``'s order.
    private static let recordColumns = "key, value, clock_wall, clock_counter, clock_origin, seq"

    /// `SELECT <columns> FROM <table> WHERE <the owner's columns are its values>`.
    private func select(_ columns: String) -> SQLBuilder {
        var sql = SQLBuilder()
        sql.append("SELECT \(columns) FROM \(table.name) WHERE ")
        appendOwner(to: &sql)
        return sql
    }

    private func appendOwner(to sql: inout SQLBuilder, alias: String? = nil) {
        for (index, (column, value)) in zip(table.ownerColumns, owner).enumerated() {
            sql.append(index == 0 ? "" : " AND ")
            sql.append(alias.map { "\($0).\(column)" } ?? column)
            sql.append(" = ")
            sql.bind(value)
        }
    }

    // MARK: Writing

    /// `INSERT INTO <table> AS stored (<columns>) `: the head of both upserts.
    private static func insertHead(_ table: SyncTable) -> String {
        "INSERT INTO \(table.name) AS stored (\(table.ownerColumns.joined(separator: ", ")), key, value, "
            + "clock_wall, clock_counter, clock_origin, seq) "
    }

    /// The tail of both upserts: a stored row is replaced only by a later version
    /// (``RecordVersion``), and the row's number is returned.
    private static func upsertTail(_ table: SyncTable) -> String {
        let conflict = (table.ownerColumns + ["key"]).joined(separator: ", ")
        return """
             ON CONFLICT (\(conflict)) DO UPDATE SET
                value = EXCLUDED.value, clock_wall = EXCLUDED.clock_wall,
                clock_counter = EXCLUDED.clock_counter, clock_origin = EXCLUDED.clock_origin,
                updated_at = now()
            WHERE \(RecordVersion.replacesSQL("EXCLUDED", stored: "stored"))
            RETURNING key, seq
            """
    }

    /// Stores `record` unless the stored version of its key is as late (``RecordVersion``), and
    /// returns the number its row took, or `nil` when it was not stored.
    ///
    /// With `savepoint`, a refusal of PostgreSQL's (``RefusedByDatabase``) undoes this record only
    /// and is thrown, the transaction going on; without, the refusal is thrown and the transaction
    /// is lost (``RefusedByDatabase/retrying(_:)`` then tries the whole again with savepoints).
    public func store(
        _ record: WireRecord, savepoint: Bool, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64? {
        var sql = SQLBuilder()
        // `seq` is the numbering trigger's to give (``SyncSchema``); 0 until it does.
        sql.append(Self.insertHead(table) + "VALUES (")
        for value in owner {
            sql.bind(value)
            sql.append(", ")
        }
        sql.bind(record.key)
        sql.append(", ")
        try sql.bind(record.value)
        sql.append(", ")
        sql.bind(record.wall)
        sql.append(", ")
        sql.bind(record.counter)
        sql.append(", ")
        sql.bind(record.origin)
        sql.append(", 0)" + Self.upsertTail(table))
        if savepoint { try await connection.query("SAVEPOINT record", logger: logger) }
        do {
            let seq = try await numbers { try await connection.query(sql.query, logger: logger) }.first?.seq
            if savepoint { try await connection.query("RELEASE SAVEPOINT record", logger: logger) }
            return seq
        } catch let refusal as RefusedByDatabase {
            if savepoint { try await connection.query("ROLLBACK TO SAVEPOINT record", logger: logger) }
            throw refusal
        }
    }

    /// Stores each of `records` as ``store(_:savepoint:on:logger:)`` does, in one statement (one
    /// round trip however many they are, prepared once on each connection), in their order;
    /// returns the keys of the stored rows with the numbers they took. Their keys must be distinct
    /// byte for byte: PostgreSQL refuses a statement that meets one row twice. A refusal of
    /// PostgreSQL's (``RefusedByDatabase``) loses the transaction.
    public func store(
        _ records: [WireRecord], on connection: PostgresConnection, logger: Logger
    ) async throws -> [(key: String, seq: Int64)] {
        guard !records.isEmpty else { return [] }
        // In the order of `batchUpsertSQL(_:)`'s placeholders.
        var bindings = ownerBindings
        bindings.append(records.map(\.key))
        // A bytea array holds no NULL here: a removal is a flag beside an empty value.
        bindings.append(records.map { ByteBuffer(bytes: $0.value ?? Data()) })
        bindings.append(records.map { $0.value == nil })
        bindings.append(records.map(\.wall))
        bindings.append(records.map(\.counter))
        bindings.append(records.map(\.origin))
        return try await numbers {
            try await connection.run(table.batchUpsert, bindings, logger: logger)
        }
    }

    /// The text of the upsert of ``store(_:on:logger:)`` over `table`: the owner's values are its
    /// first placeholders, then the records' keys, values, removal flags, clocks and origins, an
    /// array each.
    static func batchUpsertSQL(_ table: SyncTable) -> String {
        let ownerCount = table.ownerColumns.count
        let owner = (1...ownerCount).map { "$\($0)" }.joined(separator: ", ")
        let arrays = ["text", "bytea", "boolean", "bigint", "bigint", "text"].enumerated().map { index, type in
            "$\(ownerCount + 1 + index)::\(type)[]"
        }
        // In the records' order: the numbering trigger numbers the rows as they come.
        return insertHead(table)
            + "SELECT \(owner), r.key, CASE WHEN r.removed THEN NULL ELSE r.value END, r.wall, r.counter, r.origin, 0 "
            + "FROM unnest(\(arrays.joined(separator: ", "))) "
            + "WITH ORDINALITY AS r(key, value, removed, wall, counter, origin, position) ORDER BY r.position"
            + upsertTail(table)
    }

    /// Runs an upsert and returns the keys of its rows with the numbers they took (a list: two
    /// keys Swift holds equal, é written two ways, are two rows); a refusal of PostgreSQL's is
    /// thrown as ``RefusedByDatabase``.
    private func numbers<Rows: AsyncSequence>(_ upsert: () async throws -> Rows) async throws
        -> [(key: String, seq: Int64)] where Rows.Element == PostgresRow
    {
        do {
            var numbers: [(key: String, seq: Int64)] = []
            for try await row in try await upsert() {
                let (key, seq) = try row.decode((String, Int64).self)
                numbers.append((key, seq))
            }
            return numbers
        } catch let error as PSQLError {
            guard let refusal = RefusedByDatabase(error) else { throw error }
            throw refusal
        }
    }

    // MARK: Reading

    /// Every key's version, in the byte order of their names after `afterKey` when given; with
    /// `limit`, at most that many, in that order.
    public func stamps(
        afterKey: String? = nil, limit: Int? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws -> [WireStamp] {
        var sql = select("key, clock_wall, clock_counter, clock_origin")
        if let afterKey {
            sql.append(" AND key COLLATE \"C\" > ")
            sql.bind(afterKey)
        }
        if let limit {
            sql.append(" ORDER BY key COLLATE \"C\" LIMIT ")
            sql.bind(limit)
        }
        var stamps: [WireStamp] = []
        let rows = try await connection.query(sql.query, logger: logger)
        for try await (key, wall, counter, origin) in rows.decode((String, Int64, Int64, String).self) {
            stamps.append(WireStamp(key: key, wall: wall, counter: counter, origin: origin))
        }
        return stamps
    }

    /// The records of `keys` the owner has, with their numbers. A name holding a NUL is no text
    /// of PostgreSQL's, so no row holds it: such names are not asked for.
    public func records(
        forKeys keys: [String], on connection: PostgresConnection, logger: Logger
    ) async throws -> [WireRecord] {
        let names = keys.filter { !$0.utf8.contains(0) }
        guard !names.isEmpty else { return [] }
        var sql = select(Self.recordColumns)
        sql.append(" AND key = ANY(")
        sql.bind(names)
        sql.append(")")
        return try await records { try await connection.query(sql.query, logger: logger) }
    }

    /// The owner's records numbered after `seq`, in order; with `limit`, at most that many.
    public func changes(
        after seq: Int64, limit: Int? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws -> [WireRecord] {
        var sql = select(Self.recordColumns)
        sql.append(" AND seq > ")
        sql.bind(seq)
        sql.append(" ORDER BY seq")
        if let limit {
            sql.append(" LIMIT ")
            sql.bind(limit)
        }
        return try await records { try await connection.query(sql.query, logger: logger) }
    }

    /// The owner's last number, 0 when it never had one: its head when the table keeps heads (an
    /// expired removal takes its row, not its number), else its rows' highest number.
    public func latest(on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        var sql = SQLBuilder()
        if let heads = table.heads {
            sql.append("SELECT coalesce(max(latest), 0) FROM \(heads) WHERE ")
            appendOwner(to: &sql)
        } else {
            sql = select("coalesce(max(seq), 0)")
        }
        for try await latest in try await connection.query(sql.query, logger: logger).decode(Int64.self) {
            return latest
        }
        return 0
    }

    /// The owner's values, bound in the order of its columns: the first placeholders of every fixed
    /// statement over the table (and of the sync service's own, ``FixedStatement``).
    public var ownerBindings: PostgresBindings {
        var bindings = PostgresBindings()
        for value in owner { bindings.append(value) }
        return bindings
    }

    private func records<Rows: AsyncSequence>(_ query: () async throws -> Rows) async throws -> [WireRecord]
    where Rows.Element == PostgresRow {
        var records: [WireRecord] = []
        for try await row in try await query() {
            let (key, value, wall, counter, origin, seq) = try row.decode(
                (String, Data?, Int64, Int64, String, Int64).self)
            records.append(WireRecord(key: key, value: value, wall: wall, counter: counter, origin: origin, seq: seq))
        }
        return records
    }
}
