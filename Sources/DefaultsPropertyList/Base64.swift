import Foundation

/// Base64 as property lists use it.
enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0...63 for alphabet bytes, 0xFE for whitespace, 0xFD for `=`, 0xFF otherwise.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        for byte in [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0B, 0x0C] {
            table[Int(byte)] = 0xFE
        }
        table[Int(UInt8(ascii: "="))] = 0xFD
        return table
    }()

    /// Writes `data` the way CoreFoundation's XML writer does: lines of
    /// `76 - 8 * indent` characters, each preceded by `indent` tabs, with the
    /// indent capped at 8 (CF refuses to indent data more than that).
    static func encodeLines(_ data: Data, indent: Int, into out: inout ByteWriter) {
        let tabs = min(indent, 8)
        let lineLength = 76 - 8 * tabs
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            let total = bytes.count
            guard total > 0 else { return }
            alphabet.withUnsafeBufferPointer { table in
                let bytesPerLine = lineLength / 4 * 3
                var start = 0
                while start < total {
                    let end = min(start + bytesPerLine, total)
                    out.reserve(tabs + lineLength + 1)
                    for _ in 0..<tabs { out.appendUnchecked(UInt8(ascii: "\t")) }
                    var index = start
                    while index + 3 <= end {
                        let chunk =
                            UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                        out.appendUnchecked(table[Int(chunk >> 18)])
                        out.appendUnchecked(table[Int(chunk >> 12 & 0x3F)])
                        out.appendUnchecked(table[Int(chunk >> 6 & 0x3F)])
                        out.appendUnchecked(table[Int(chunk & 0x3F)])
                        index += 3
                    }
                    let remaining = end - index
                    if remaining > 0 {
                        let b0 = UInt32(bytes[index])
                        let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
                        let chunk = b0 << 16 | b1 << 8
                        out.appendUnchecked(table[Int(chunk >> 18)])
                        out.appendUnchecked(table[Int(chunk >> 12 & 0x3F)])
                        out.appendUnchecked(remaining > 1 ? table[Int(chunk >> 6 & 0x3F)] : UInt8(ascii: "="))
                        out.appendUnchecked(UInt8(ascii: "="))
                    }
                    out.appendUnchecked(UInt8(ascii: "\n"))
                    start = end
                }
            }
        }
    }

    /// Decodes base64 text, skipping whitespace anywhere; `nil` if it is not valid base64.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> Data? {
        var output = [UInt8]()
        output.reserveCapacity(text.count / 4 * 3)
        var accumulator: UInt32 = 0
        var pending = 0
        var padding = 0
        let valid = decodeTable.withUnsafeBufferPointer { table -> Bool in
            for byte in text {
                let code = table[Int(byte)]
                if code < 64 {
                    // Data after padding is not base64 any more.
                    if padding > 0 { return false }
                    accumulator = accumulator << 6 | UInt32(code)
                    pending += 1
                    if pending == 4 {
                        output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                        output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                        output.append(UInt8(truncatingIfNeeded: accumulator))
                        accumulator = 0
                        pending = 0
                    }
                } else if code == 0xFD {
                    padding += 1
                    if padding > 2 { return false }
                } else if code != 0xFE {
                    return false
                }
            }
            return true
        }
        guard valid else { return nil }
        switch pending {
        case 0:
            guard padding == 0 else { return nil }
        case 2:
            guard padding == 0 || padding == 2 else { return nil }
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            guard padding <= 1 else { return nil }
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            return nil
        }
        return Data(output)
    }
}
