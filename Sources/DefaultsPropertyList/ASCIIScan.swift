/// Finds the first byte that is not ASCII, eight bytes at a time: property lists are mostly
/// ASCII, and this check runs over every byte of every file read.
enum ASCIIScan {
    /// The index of the first byte of `bytes` at or above 0x80, or `nil` when all are ASCII.
    static func firstNonASCII(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 <= bytes.count {
            if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] >= 0x80 { return index }
            index += 1
        }
        return nil
    }
}
