package import DefaultsSyncProtocol

// The one place the engine's records and the wire's (`DefaultsSyncProtocol`, the rows of the SQL
// layer and the service's messages alike) become each other: the PostgreSQL store and the
// service's client both convert here.

extension WireRecord {
    /// The wire's form of `record`, unnumbered: its number is the server's or the table's to give.
    package init(_ record: SyncRecord) {
        let version = record.timestamp.version
        self.init(
            key: record.key, value: record.value, wall: version.wall, counter: version.counter,
            origin: version.origin)
    }
}

extension SyncRecord {
    /// The record `wire` carries; its number, if any, is the store's to keep.
    package init(_ wire: WireRecord) {
        self.init(key: wire.key, value: wire.value, timestamp: SyncTimestamp(wire.version))
    }
}

extension SyncTimestamp {
    /// The version `stamp` names.
    package init(_ stamp: WireStamp) {
        self.init(stamp.version)
    }
}
