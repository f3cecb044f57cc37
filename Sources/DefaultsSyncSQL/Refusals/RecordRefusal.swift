import DefaultsSyncProtocol

/// Why a record can never be stored as it is, decided before the database is asked: trying again
/// would fail again, so the record is refused by name and the others stored.
public enum RecordRefusal {
    /// Why `record` can never be stored, or `nil`: a NUL character in its key's name or its origin
    /// (PostgreSQL's text holds none); with `limits`, a name, origin or value over them; with the
    /// wall clock `now` (milliseconds since 1970), a version too far ahead of it
    /// (`WireVersion.isTooFarAhead(of:)`), which would win every later change of its key.
    public static func reason(
        for record: WireRecord, limits: ServiceLimits? = nil, now: Int64? = nil
    ) -> String? {
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
        if let now, record.version.isTooFarAhead(of: now) {
            let hours = record.wall / 3_600_000 - now / 3_600_000
            return "its version is stamped \(hours) hours ahead of the clock that received it, "
                + "more than the day clocks may disagree by"
        }
        return nil
    }
}
