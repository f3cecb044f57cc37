import Defaults
import DefaultsSyncProtocol

// The one place the engine's records and the SQL layer's rows (`DefaultsSyncSQL`, which knows no
// engine) become each other.

extension WireRecord {
    /// The row of `record`, unnumbered.
    init(_ record: SyncRecord) {
        self.init(
            key: record.key, value: record.value, wall: record.timestamp.wallTime, counter: record.timestamp.counter,
            origin: record.timestamp.origin)
    }
}

extension SyncRecord {
    /// The record a row holds; its number is the store's to keep.
    init(_ row: WireRecord) {
        self.init(
            key: row.key, value: row.value,
            timestamp: SyncTimestamp(wallTime: row.wall, counter: row.counter, origin: row.origin))
    }
}

extension SyncTimestamp {
    /// The version a row's stamp names.
    init(_ stamp: WireStamp) {
        self.init(wallTime: stamp.wall, counter: stamp.counter, origin: stamp.origin)
    }
}
