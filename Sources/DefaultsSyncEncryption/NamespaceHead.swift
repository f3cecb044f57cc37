import Defaults
import Foundation

/// What a namespace's head record holds, sealed: the latest version of each key's record that the
/// devices with the passphrase know the store holds, by stored name.
///
/// An honest store never holds a key's record older than a head it stored claims, as it replaces
/// a record only with a later one: a record older than that was rolled back. A device claims only
/// versions it knows are stored (pushed and not refused, or received), so that a head never
/// accuses the store wrongly. Claims only grow: heads merge by taking the later version of each key.
struct NamespaceHead: Sendable, Equatable {
    var versions: [String: SyncTimestamp] = [:]

    /// Takes the later version of each key from `other`; returns whether any was later.
    @discardableResult
    mutating func merge(_ other: NamespaceHead) -> Bool {
        var changed = false
        for (name, version) in other.versions {
            changed = raise(name, to: version) || changed
        }
        return changed
    }

    /// Claims `version` for `name` unless a later one is claimed; returns whether it changed.
    @discardableResult
    mutating func raise(_ name: String, to version: SyncTimestamp) -> Bool {
        if let claimed = versions[name], claimed >= version { return false }
        versions[name] = version
        return true
    }

    // MARK: Encoding

    /// Format 1: the format byte; the origins (a 16-bit count, each a 16-bit length and UTF-8);
    /// then the keys (a 32-bit count, each a 16-bit length and the stored name in UTF-8, the wall
    /// time and counter as 64-bit integers, and the index of its origin, 16 bits). Big-endian.
    /// Origins repeat across keys (one per syncing process), so they are written once.
    static let format: UInt8 = 1

    func encoded() -> Data {
        var origins: [String: Int] = [:]
        var originList: [String] = []
        for version in versions.values where origins[version.origin] == nil {
            origins[version.origin] = originList.count
            originList.append(version.origin)
        }
        var data = Data([Self.format])
        Self.append(UInt16(truncatingIfNeeded: originList.count), to: &data)
        for origin in originList {
            Self.appendText(origin, to: &data)
        }
        Self.append(UInt32(truncatingIfNeeded: versions.count), to: &data)
        for (name, version) in versions.sorted(by: { $0.key < $1.key }) {
            Self.appendText(name, to: &data)
            Self.append(UInt64(bitPattern: version.wallTime), to: &data)
            Self.append(UInt64(bitPattern: version.counter), to: &data)
            Self.append(UInt16(truncatingIfNeeded: origins[version.origin] ?? 0), to: &data)
        }
        return data
    }

    /// Reads what ``encoded()`` wrote; throws ``EndToEndError/malformed`` for anything else, never
    /// reading past the end nor allocating more than the bytes can hold.
    init(decoding data: Data) throws(EndToEndError) {
        var reader = Reader(bytes: [UInt8](data))
        guard try reader.integer(UInt8.self) == Self.format else { throw .malformed }
        let originCount = Int(try reader.integer(UInt16.self))
        var origins: [String] = []
        for _ in 0..<originCount {
            origins.append(try reader.text())
        }
        let count = Int(try reader.integer(UInt32.self))
        // Each key takes at least 20 bytes: a count beyond what is left is a lie.
        guard count <= reader.remaining / 20 else { throw .malformed }
        versions.reserveCapacity(count)
        for _ in 0..<count {
            let name = try reader.text()
            let wallTime = Int64(bitPattern: try reader.integer(UInt64.self))
            let counter = Int64(bitPattern: try reader.integer(UInt64.self))
            let origin = Int(try reader.integer(UInt16.self))
            guard origin < origins.count, counter >= 0 else { throw .malformed }
            versions[name] = SyncTimestamp(wallTime: wallTime, counter: counter, origin: origins[origin])
        }
        guard reader.remaining == 0 else { throw .malformed }
    }

    init() {}

    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }

    /// UTF-8 with a 16-bit length; longer text is cut (no name or origin the library writes is).
    private static func appendText(_ text: String, to data: inout Data) {
        let bytes = Array(text.utf8.prefix(Int(UInt16.max)))
        append(UInt16(bytes.count), to: &data)
        data.append(contentsOf: bytes)
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var remaining: Int { bytes.count - offset }

        mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) throws(EndToEndError) -> Integer {
            let size = MemoryLayout<Integer>.size
            guard remaining >= size else { throw .malformed }
            var value: Integer = 0
            for byte in bytes[offset..<(offset + size)] {
                value = value << 8 | Integer(byte)
            }
            offset += size
            return value
        }

        mutating func text() throws(EndToEndError) -> String {
            let length = Int(try integer(UInt16.self))
            guard remaining >= length else { throw .malformed }
            defer { offset += length }
            return String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
        }
    }
}
