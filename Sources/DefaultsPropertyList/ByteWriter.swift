import Foundation

/// A growable byte buffer that the writers append to.
///
/// Noncopyable so that it owns its allocation outright: no reference
/// counting or uniqueness checks on each append (as `[UInt8]` would do), and
/// the finished bytes are handed to `Data` without a copy.
struct ByteWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    /// The most bytes kept: past it, what was written is dropped and only counted, so that a
    /// document over a writer's limit is measured without ever being held.
    private let limit: Int
    /// The bytes dropped since the limit was passed.
    private var dropped = 0

    init(capacity: Int = 4096, limit: Int = .max) {
        self.capacity = max(min(capacity, limit), 64)
        self.limit = limit
        base = .allocate(capacity: self.capacity)
    }

    /// How many bytes were written, kept or dropped.
    var size: Int { dropped + count }
    /// Whether the limit was passed: the bytes kept are then not the document.
    var isOverLimit: Bool { dropped > 0 }

    deinit { base.deallocate() }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        if needed > limit {
            // Over the limit: start over at the buffer's beginning, counting what is dropped.
            dropped += count
            let extra = needed - count
            count = 0
            if extra <= capacity { return }
            base.deallocate()
            capacity = extra
            base = .allocate(capacity: extra)
            return
        }
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        newCapacity = min(newCapacity, limit)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends a byte without checking capacity; the caller has called `reserve`.
    @inline(__always)
    mutating func appendUnchecked(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ string: StaticString) {
        append(UnsafeBufferPointer(start: string.utf8Start, count: string.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 of `string`, copying in one block when the string is native.
    mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append($0) }
    }

    /// Appends `byte` `times` times (indentation).
    mutating func append(repeating byte: UInt8, count times: Int) {
        guard times > 0 else { return }
        reserve(times)
        (base + count).update(repeating: byte, count: times)
        count += times
    }

    /// Appends a signed decimal integer without going through `String`.
    mutating func appendDecimal(_ value: Int) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            appendDecimal(UInt64(value.magnitude))
        } else {
            appendDecimal(UInt64(value))
        }
    }

    /// Appends an unsigned decimal integer without going through `String`.
    mutating func appendDecimal(_ value: UInt64) {
        reserve(20)
        var digits = 1
        var probe = value
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        var rest = value
        var index = count + digits - 1
        repeat {
            base[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            index -= 1
        } while rest > 0
        count += digits
    }

    /// Appends `value` zero-padded to at least `width` digits (dates).
    mutating func appendPadded(_ value: Int, width: Int) {
        if value < 0 {
            append(UInt8(ascii: "-"))
            appendPadded(-value, width: width)
            return
        }
        var digits = 1
        var probe = value
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        append(repeating: UInt8(ascii: "0"), count: width - digits)
        appendDecimal(UInt64(value))
    }

    /// Appends `byte` as two lowercase hex digits.
    mutating func appendHex(_ byte: UInt8) {
        reserve(2)
        appendUnchecked(ByteWriter.hexDigits[Int(byte >> 4)])
        appendUnchecked(ByteWriter.hexDigits[Int(byte & 0x0F)])
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Hands the bytes to `Data` without copying them.
    consuming func finishData() -> Data {
        let data = Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
        discard self
        return data
    }

    /// Decodes the bytes as UTF-8 into a `String`.
    /// Hands the bytes written so far to `sink` and starts again from none, keeping the room.
    mutating func drain(into sink: (UnsafeRawBufferPointer) -> Void) {
        sink(UnsafeRawBufferPointer(start: base, count: count))
        count = 0
    }

    consuming func finishString() -> String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }
}
