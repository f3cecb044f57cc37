import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// `<real>` text is read without `strtod` when it is short (ShortDecimal); whatever the path, the
/// value is the one `strtod` (`Double(_:)`) gives, to the bit.
@Suite("Reading reals")
struct RealReadingTests {
    private func read(_ text: String) throws -> Double? {
        let document = "<plist version=\"1.0\"><real>\(text)</real></plist>"
        guard case .real(let value) = try PropertyList.decodeValue(Data(document.utf8)) else { return nil }
        return value
    }

    private func expectSameAsStrtod(_ text: String) throws {
        let expected = try #require(Double(text), "\(text)")
        let read = try #require(try read(text), "\(text)")
        #expect(read.bitPattern == expected.bitPattern, "\(text): \(read) instead of \(expected)")
    }

    @Test func randomDoublesInEveryNotationReadAsStrtodReadsThem() throws {
        var random = SeededGenerator(seed: 0x5EA1)
        for _ in 0..<20_000 {
            // Any finite double, and ones of everyday size.
            let any = Double(bitPattern: random.next() & ~(0x7FF << 52) | (random.next() % 0x7FF) << 52)
            let everyday = Double(Int64.random(in: -1_000_000...1_000_000, using: &random)) / 7
            for value in [any, everyday] where value.isFinite {
                for text in [
                    "\(value)", String(format: "%.17g", value), String(format: "%.16g", value),
                    String(format: "%.15g", value), String(format: "%.6e", value),
                ] {
                    try expectSameAsStrtod(text)
                }
            }
        }
    }

    @Test func randomDecimalsOfUpToTwentyDigitsReadAsStrtodReadsThem() throws {
        var random = SeededGenerator(seed: 0xDEC1)
        for _ in 0..<50_000 {
            let digitCount = Int.random(in: 1...20, using: &random)
            var digits = (0..<digitCount).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            if Bool.random(using: &random) {
                digits.insert(
                    ".", at: digits.index(digits.startIndex, offsetBy: Int.random(in: 0...digitCount, using: &random)))
            }
            let exponent = Bool.random(using: &random) ? "e\(Int.random(in: -35...35, using: &random))" : ""
            try expectSameAsStrtod((Bool.random(using: &random) ? "-" : "") + digits + exponent)
        }
    }

    /// Texts whose exact value is a midpoint between two doubles, or next to one: rounding twice
    /// (to 64 bits, then to 53) would get some of them wrong.
    @Test func midpointsRoundToEven() throws {
        for text in [
            "9007199254740993",  // 2⁵³ + 1: between 2⁵³ and 2⁵³ + 2, rounds to even (2⁵³)
            "9007199254740995", "9007199254740997", "18014398509481986", "18014398509481990",
            "9007199254740993.0000000001", "9007199254740992.9999999999",
            "1.00000000000000011102230246251565404236316680908203125",  // 1 + 2⁻⁵³, exactly
            "1.0000000000000001110223024625156540", "1.0000000000000001110223024625156541",
            "4503599627370496.5", "4503599627370497.5", "2.5e-1", "0.1", "0.3", "1e23", "8.41e21",
        ] {
            try expectSameAsStrtod(text)
        }
    }

    @Test func spellingsAndLimits() throws {
        for text in [
            "0", "-0", "+0", "0.000", "-0.0e5", "1.", ".5", "-.5", "+1.5", "1e5", "1E+05", "1e-05",
            "0.000000000000000000000000001", "123456789012345678901234567890", "1e27", "1e28", "1e-27",
            "1e-28", "1.7976931348623157e308", "2.2250738585072014e-308", "4.9e-324", "1e-400", "1e400",
            "00000000000000000000001.5", "1.50000000000000000000000", "  2.5  ",
        ] {
            let expected = try #require(Double(text.trimmingCharacters(in: .whitespaces)), "\(text)")
            let read = try #require(try read(text), "\(text)")
            #expect(read.bitPattern == expected.bitPattern, "\(text)")
        }
        #expect(try read("-0")?.sign == .minus)
    }

    @Test func malformedRealsAreRefused() {
        for text in ["", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "--1", "1-", "0x1p3", "1,5", "1 5", "١"] {
            #expect(throws: PropertyListError.self, "\(text)") { try read(text) }
        }
    }
}
