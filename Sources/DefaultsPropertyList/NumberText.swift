/// Reading and writing the text forms of numbers and dates in property lists.
enum NumberText {
    enum IntegerResult {
        case value(PropertyListValue)
        case invalid
        case overflow
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
    }

    /// Trims XML whitespace from both ends of `text`.
    static func trimmed(_ text: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = text.count
        while start < end, isSpace(text[start]) { start += 1 }
        while end > start, isSpace(text[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: text[start..<end])
    }

    /// Parses `[+-]digits` or `[+-]0x hex` into an `Int`, or a `UInt64` when
    /// above `Int.max`, as CoreFoundation accepts them.
    static func parseInteger(_ text: UnsafeBufferPointer<UInt8>) -> IntegerResult {
        let text = trimmed(text)
        var index = 0
        var negative = false
        if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            negative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        var radix: UInt64 = 10
        if index + 1 < text.count, text[index] == UInt8(ascii: "0"), text[index + 1] | 0x20 == UInt8(ascii: "x") {
            radix = 16
            index += 2
        }
        guard index < text.count else { return .invalid }
        var magnitude: UInt64 = 0
        while index < text.count {
            let byte = text[index]
            let digit: UInt64
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte &- UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16:
                digit = UInt64(byte &- UInt8(ascii: "a") &+ 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16:
                digit = UInt64(byte &- UInt8(ascii: "A") &+ 10)
            default: return .invalid
            }
            let (shifted, overflow1) = magnitude.multipliedReportingOverflow(by: radix)
            let (sum, overflow2) = shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 {
                // Keep scanning so that "12x" past the overflow still reports the bad character.
                while index < text.count {
                    let b = text[index]
                    let isDigit =
                        (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
                        || (radix == 16 && ((b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "f")))
                    if !isDigit { return .invalid }
                    index += 1
                }
                return .overflow
            }
            magnitude = sum
            index += 1
        }
        if negative {
            if magnitude <= UInt64(Int.max) { return .value(.integer(-Int(magnitude))) }
            if magnitude == UInt64(Int.max) + 1 { return .value(.integer(Int.min)) }
            return .overflow
        }
        if magnitude <= UInt64(Int.max) { return .value(.integer(Int(magnitude))) }
        return .value(.unsignedInteger(magnitude))
    }

    /// Parses a `<real>`: decimal notation, or the words CoreFoundation reads
    /// (`nan`, `inf`, `infinity`, with an optional sign, any case).
    static func parseReal(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        let text = trimmed(text)
        guard !text.isEmpty, text.count <= 64 else {
            return text.count > 64 ? parseLongReal(text) : nil
        }
        if let value = ShortDecimal.parse(text) { return value }
        var hasLetter = false
        for byte in text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                continue
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                continue
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                hasLetter = true
            default:
                return nil
            }
        }
        // Short ASCII: the String is stored inline, no allocation.
        let string = String(decoding: text, as: UTF8.self)
        if hasLetter {
            switch string.lowercased() {
            case "nan", "+nan", "-nan": return .nan
            case "inf", "+inf", "infinity", "+infinity": return .infinity
            case "-inf", "-infinity": return -.infinity
            default: return nil
            }
        }
        return Double(string)
    }

    /// Reals longer than 64 characters are legal (many digits) but rare; checked the same way, without the words.
    private static func parseLongReal(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        for byte in text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                continue
            default:
                return nil
            }
        }
        return Double(String(decoding: text, as: UTF8.self))
    }

    /// Appends the shortest text that reads back as the same `Double`:
    /// `1` rather than `1.0`, `0.1` rather than `0.10000000000000001`; and
    /// `0.0`, `nan`, `+infinity`, `-infinity` as CoreFoundation spells them.
    static func appendReal(_ value: Double, to out: inout ByteWriter) {
        if value.isNaN {
            out.append("nan")
        } else if value.isInfinite {
            out.append(value < 0 ? "-infinity" : "+infinity")
        } else if value == value.rounded(), abs(value) < 1e15 {
            // Integral values print as integers, the common case in settings; zero
            // as CoreFoundation spells it (which drops the sign of -0, so we do not).
            if value == 0 {
                out.append(value.sign == .minus ? "-0.0" : "0.0")
            } else {
                out.appendDecimal(Int(value))
            }
        } else {
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            out.append(text)
        }
    }

    /// Appends a `Double` as `NSNumber.description` shows it: shortest text, `nan`, `inf`, `-inf`.
    static func appendDescription(_ value: Double, to out: inout ByteWriter) {
        if value.isInfinite {
            out.append(value < 0 ? "-inf" : "inf")
        } else {
            appendReal(value, to: &out)
        }
    }

    /// Reads `yyyy-MM-ddTHH:mm:ssZ` (optionally with fractional seconds, and
    /// a signed or longer year as CoreFoundation writes for far dates).
    static func parseISODate(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        let text = trimmed(text)
        var index = 0
        func number(maxDigits: Int, minDigits: Int) -> Int? {
            var value = 0
            var digits = 0
            while index < text.count, digits < maxDigits, text[index] >= UInt8(ascii: "0"),
                text[index] <= UInt8(ascii: "9")
            {
                value = value * 10 + Int(text[index] &- UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            return digits >= minDigits ? value : nil
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < text.count, text[index] == byte else { return false }
            index += 1
            return true
        }
        var sign = 1
        if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            sign = text[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
        }
        guard let year = number(maxDigits: 8, minDigits: 4), expect(UInt8(ascii: "-")),
            let month = number(maxDigits: 2, minDigits: 2), expect(UInt8(ascii: "-")),
            let day = number(maxDigits: 2, minDigits: 2), expect(UInt8(ascii: "T")),
            let hour = number(maxDigits: 2, minDigits: 2), expect(UInt8(ascii: ":")),
            let minute = number(maxDigits: 2, minDigits: 2), expect(UInt8(ascii: ":")),
            let second = number(maxDigits: 2, minDigits: 2)
        else { return nil }
        var fraction = 0.0
        if expect(UInt8(ascii: ".")) {
            var scale = 0.1
            var digits = 0
            while index < text.count, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "9") {
                fraction += Double(text[index] &- UInt8(ascii: "0")) * scale
                scale /= 10
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
        }
        guard expect(UInt8(ascii: "Z")), index == text.count else { return nil }
        let civil = CivilTime(year: sign * year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard civil.isValid else { return nil }
        return civil.timeIntervalSinceReferenceDate + fraction
    }

    /// Appends `yyyy-MM-ddTHH:mm:ssZ`, whole seconds rounded down as CoreFoundation does.
    static func appendISODate(_ interval: Double, to out: inout ByteWriter) {
        CivilTime(referenceInterval: interval).append(to: &out, between: "T", zone: "Z")
    }
}
