import Foundation

/// A binary property list `{ k = (o, o, o, …) }`: `count` one-byte references to one object `o`,
/// given as its encoded bytes, for the tests of hostile files that expand when decoded (the file
/// is about `count` bytes; the tree it describes holds `count` values).
public func sharedReferencePlist(count: Int, sharedObject: [UInt8]) -> Data {
    var bytes = Array("bplist00".utf8)
    var offsets: [Int] = []
    offsets.append(bytes.count)  // 0: the shared object
    bytes += sharedObject
    offsets.append(bytes.count)  // 1: the array, referring to 0 `count` times
    bytes += [0xAF, 0x12] + withUnsafeBytes(of: UInt32(count).bigEndian, Array.init)
    bytes += [UInt8](repeating: 0, count: count)
    offsets.append(bytes.count)  // 2: the key
    bytes += [0x51, UInt8(ascii: "k")]
    offsets.append(bytes.count)  // 3: the top dictionary { 2: 1 }
    bytes += [0xD1, 0x02, 0x01]
    let tableStart = bytes.count
    for offset in offsets {
        bytes += withUnsafeBytes(of: UInt32(offset).bigEndian, Array.init)
    }
    // Offsets of 4 bytes, references of 1; the object count, the top object (3) and the table.
    bytes += [0, 0, 0, 0, 0, 0, 4, 1]
    bytes += withUnsafeBytes(of: UInt64(offsets.count).bigEndian, Array.init)
    bytes += withUnsafeBytes(of: UInt64(3).bigEndian, Array.init)
    bytes += withUnsafeBytes(of: UInt64(tableStart).bigEndian, Array.init)
    return Data(bytes)
}
