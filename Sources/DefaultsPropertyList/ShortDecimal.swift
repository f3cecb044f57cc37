/// Reads the common `<real>`, a decimal of at most 19 significant digits times a power of ten
/// within ±27, without `strtod`: the digits and the power are exact in `Float80`, so one
/// division or multiplication rounds once, and the rounding to `Double` is right unless that
/// first result lies on the midpoint between two doubles. That case, and every other text, is
/// left to `strtod` (`nil`), so the result is always the one `strtod` gives.
///
/// `strtod` is exact for any length of input and costs about 2,000 instructions for the 17 digits
/// of a `Double` written shortest-round-trip; this, about a tenth of that. `Float80` exists on
/// x86-64, except on Windows and Android; elsewhere every text goes to `strtod`.
enum ShortDecimal {
    #if arch(x86_64) && !os(Windows) && !os(Android)
    /// The value of `text` (already trimmed), or `nil` to let `strtod` read it.
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let count = text.count
        var isNegative = false
        if index < count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            isNegative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        var significand: UInt64 = 0
        var digits = 0  // significant digits in `significand`: leading zeros do not count
        var exponent = 0
        var hasDigits = false
        var isFraction = false
        while index < count {
            let byte = text[index]
            if byte == UInt8(ascii: "."), !isFraction {
                isFraction = true
            } else if byte &- UInt8(ascii: "0") < 10 {
                hasDigits = true
                if significand != 0 || byte != UInt8(ascii: "0") {
                    digits += 1
                    guard digits <= 19 else { return nil }
                    significand = significand * 10 + UInt64(byte &- UInt8(ascii: "0"))
                }
                if isFraction { exponent -= 1 }
            } else {
                break
            }
            index += 1
        }
        guard hasDigits else { return nil }
        if index < count, text[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var isExponentNegative = false
            if index < count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
                isExponentNegative = text[index] == UInt8(ascii: "-")
                index += 1
            }
            var written = 0
            let start = index
            while index < count, text[index] &- UInt8(ascii: "0") < 10, index - start < 4 {
                written = written * 10 + Int(text[index] &- UInt8(ascii: "0"))
                index += 1
            }
            guard index > start else { return nil }
            exponent += isExponentNegative ? -written : written
        }
        guard index == count else { return nil }
        if significand == 0 { return isNegative ? -0.0 : 0.0 }
        guard exponent.magnitude < powersOfTen.count else { return nil }
        let power = powersOfTen[Int(exponent.magnitude)]
        let exact = exponent < 0 ? Float80(significand) / power : Float80(significand) * power
        // A double has 11 fewer significand bits: low bits of 0x400 are a midpoint between two,
        // where rounding twice can differ from rounding once. Next to it, `strtod` decides.
        let dropped = exact.significandBitPattern & 0x7FF
        guard dropped < 0x3FF || dropped > 0x401 else { return nil }
        let value = Double(exact)
        return isNegative ? -value : value
    }

    /// 10⁰ … 10²⁷, each exact in `Float80` (5²⁷ < 2⁶⁴).
    private static let powersOfTen: [Float80] = {
        var powers: [Float80] = [1]
        for _ in 1...27 { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()
    #else
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Double? { nil }
    #endif
}
