import PostgresNIO

/// Builds a statement over a ``SyncTable``: fixed identifiers written into the text, every value
/// bound as a parameter.
struct SQLBuilder {
    private var sql = ""
    private var binds = PostgresBindings()

    /// Appends fixed text (identifiers and SQL of this module's, never input).
    mutating func append(_ text: String) {
        sql += text
    }

    /// Binds `value` and appends its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) {
        binds.append(value)
        sql += "$\(binds.count)"
    }

    /// Binds `value`, `NULL` when it is `nil`, and appends its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value?) {
        binds.append(value)
        sql += "$\(binds.count)"
    }

    /// Binds `value` (of a type whose encoding may throw), `NULL` when it is `nil`, and appends its
    /// placeholder.
    mutating func bind<Value: PostgresThrowingDynamicTypeEncodable>(_ value: Value?) throws {
        try binds.append(value)
        sql += "$\(binds.count)"
    }

    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }
}
