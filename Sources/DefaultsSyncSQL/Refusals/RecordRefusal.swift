import DefaultsSyncProtocol

/// Why a record can never be stored as it is, decided before the database is asked: trying again
/// would fail again, so the record is refused by name and the others stored.
public enum RecordRefusal {
    /// Why `record` can never be stored, or `nil`: a NUL character in its key's name or its origin
    /// (PostgreSQL's text holds none) or, with `limits`, a name, origin or value over them.
    public static func reason(for record: WireRecord, limits: ServiceLimits? = nil) -> String? {
        let (name, origin) = (record.key.utf8.count, record.origin.utf8.count)
        if record.key.utf8.contains(0) { return "a key name cannot hold a NUL character" }
        if let limits, name > limits.keyBytes {
            return "the key's name is \(name) bytes, over the limit of \(limits.keyBytes) bytes per name"
        }
        if record.origin.utf8.contains(0) { return "an origin cannot hold a NUL character" }
        if let limits, origin > limits.originBytes {
            return "the origin is \(origin) bytes, over the limit of \(limits.originBytes) bytes per origin"
        }
        if let limits, let size = record.value?.count, size > limits.valueBytes {
            return "the value is \(size) bytes, over the limit of \(limits.valueBytes) bytes per value"
        }
        return nil
    }
}
