import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

@Suite("Malformed and hostile input is an error, never a crash")
struct MalformedInputTests {
    static let document = plistDocument(
        """
        <dict>
        \t<key>a</key>
        \t<array>
        \t\t<integer>1</integer>
        \t\t<string>x &amp; y</string>
        \t\t<data>AAEC</data>
        \t</array>
        \t<key>b</key>
        \t<dict/>
        </dict>
        """
    )

    @Test func everyTruncationOfAnXMLDocumentFails() {
        let bytes = Array(Self.document.utf8)
        // Up to (not including) the final '>' of </plist>; the trailing newline is optional.
        for length in 0..<(bytes.count - 2) {
            expectDecodeError(Data(bytes[0..<length]))
        }
    }

    @Test func truncationReportsTruncated() {
        expectDecodeError("<plist version=\"1.0\"><array><integer>1</integer>", kind: .truncated)
        expectDecodeError("<string>abc", kind: .truncated)
        expectDecodeError("", kind: .truncated)
    }

    @Test func unbalancedTags() {
        expectDecodeError("<array><dict></array>", kind: .syntax)
        expectDecodeError("<string>a</strin>", kind: .syntax)
        expectDecodeError("<plist><array></plist>", kind: .syntax)
        expectDecodeError("</array>", kind: .syntax)
        expectDecodeError("<plist><true/><true/></plist>", kind: .syntax)
        expectDecodeError("<plist></plist>", kind: .syntax)
        expectDecodeError("<array><unknown/></array>", kind: .syntax)
        expectDecodeError("<true>yes</true>", kind: .syntax)
        expectDecodeError("<integer>1</integer><integer>2</integer>", kind: .syntax)
    }

    @Test func keyWithoutValue() throws {
        let text = plistDocument("<dict>\n\t<key>lonely</key>\n</dict>")
        do {
            _ = try PropertyList.decode(Data(text.utf8))
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.message.contains("lonely"))
            #expect(error.line == 5)
            #expect(error.description.hasPrefix("line 5"))
        }
        expectDecodeError("<dict><integer>1</integer></dict>", kind: .syntax)
        expectDecodeError("<key>a</key>", kind: .syntax)
    }

    @Test func textWhereAValueIsExpected() {
        expectDecodeError("<array>hello</array>", kind: .syntax)
        expectDecodeError("<dict>hello</dict>", kind: .syntax)
        expectDecodeError("<dict><key>a</key>hello</dict>", kind: .syntax)
        expectDecodeError("<plist version=\"1.0\">hello</plist>", kind: .syntax)
        expectDecodeError("<array><string>a</string>junk</array>", kind: .syntax)
    }

    @Test func nestingLimit() throws {
        let limit = PropertyList.maximumDepth
        let ok = String(repeating: "<array>", count: limit) + String(repeating: "</array>", count: limit)
        #expect(try PropertyList.decode(Data(ok.utf8)) is [Any])
        let tooDeep = String(repeating: "<array>", count: limit + 1) + String(repeating: "</array>", count: limit + 1)
        expectDecodeError(tooDeep, kind: .tooDeep)
        // Far deeper input fails at the limit instead of overflowing the stack.
        expectDecodeError(String(repeating: "<dict><key>k</key>", count: 200_000), kind: .tooDeep)
        expectDecodeError(String(repeating: "(", count: 200_000), kind: .tooDeep)
        expectDecodeError(String(repeating: "{a=", count: 200_000), kind: .tooDeep)
    }

    @Test func writingTooDeepIsAnError() throws {
        var value: Any = 1
        for _ in 0..<PropertyList.maximumDepth { value = [value] }
        _ = try PropertyList.encodeXML(value)
        value = [value]
        #expect(throws: PropertyListError.self) { try PropertyList.encodeXML(value) }
    }

    @Test func randomGarbageNeverCrashes() {
        var random = SeededGenerator(seed: 99)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? PropertyList.decode(Data(bytes))
            _ = try? PropertyList.decode(Data("bplist00".utf8) + Data(bytes))
        }
    }

    @Test func mutatedXMLNeverCrashes() {
        var random = SeededGenerator(seed: 7)
        let original = Array(Self.document.utf8)
        let alphabet = Array("<>/&;![]-?=\"' \n\tabcdeiklnrsty0123456789#x".utf8)
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[index] = alphabet.randomElement(using: &random) ?? 0
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet.randomElement(using: &random) ?? 0, at: index)
                }
            }
            _ = try? PropertyList.decode(Data(bytes))
        }
    }

    @Test func mutatedBinaryNeverCrashes() throws {
        var generator = ValueGenerator(random: SeededGenerator(seed: 11))
        var random = SeededGenerator(seed: 12)
        for _ in 0..<60 {
            let binary = Array(try foundationEncode(["v": generator.value(), "w": [1, 2, "three"]], .binary))
            for _ in 0..<50 {
                var bytes = binary
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let index = Int.random(in: 8..<bytes.count, using: &random)
                    bytes[index] = UInt8.random(in: 0...255, using: &random)
                }
                _ = try? PropertyList.decode(Data(bytes))
            }
            for length in stride(from: 0, to: binary.count, by: max(1, binary.count / 40)) {
                #expect(throws: PropertyListError.self) { try PropertyList.decodeBinary(Data(binary[0..<length])) }
            }
        }
    }
}

/// Hand-built binary property lists for the structural checks.
@Suite("Binary property-list structure")
struct BinaryStructureTests {
    /// Assembles a bplist00 from encoded objects, with 1-byte references and offsets as given.
    static func bplist(
        _ objects: [[UInt8]], top: UInt64 = 0, offsetSize: UInt8 = 2, referenceSize: UInt8 = 1,
        objectCount: UInt64? = nil, tableOffset: UInt64? = nil
    ) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets {
            for shift in stride(from: (Int(offsetSize) - 1) * 8, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: offset >> shift))
            }
        }
        bytes += [0, 0, 0, 0, 0, 0, offsetSize, referenceSize]
        for field in [objectCount ?? UInt64(objects.count), top, tableOffset ?? UInt64(table)] {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: field >> shift))
            }
        }
        return Data(bytes)
    }

    @Test func handBuiltValues() throws {
        let data = Self.bplist([
            [0xD2, 1, 2, 3, 4],  // dict with 2 entries: keys 1, 2; values 3, 4
            [0x51, UInt8(ascii: "a")],
            [0x61, 0x00, 0xE9],  // UTF-16BE "é"
            [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // 8-byte -1
            [0xA3, 5, 6, 7],
            [0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // 16-byte UInt64.max
            [0x22, 0x3F, 0xC0, 0x00, 0x00],  // Float 1.5
            [0x09],
        ])
        let value = try #require(try PropertyList.decodeBinary(data) as? [String: Any])
        #expect(value["a"] as? Int == -1)
        let list = try #require(value["é"] as? [Any])
        #expect(list[0] as? UInt64 == UInt64.max)
        #expect(list[1] as? Double == 1.5)
        #expect(list[2] as? Bool == true)
    }

    @Test func cyclesAreRejected() {
        expectDecodeError(Self.bplist([[0xA1, 0]]), kind: .corrupt)
        expectDecodeError(Self.bplist([[0xA1, 1], [0xA1, 0]]), kind: .corrupt)
        expectDecodeError(Self.bplist([[0xD1, 1, 0], [0x51, 0x61]]), kind: .corrupt)
    }

    /// A dictionary referenced 2,000 times is decoded once: every copy shares its storage, so
    /// memory follows the file, not the references (an 8 MB file of them took 475 MB).
    @Test func anObjectReferencedManyTimesIsDecodedOnce() throws {
        let copies = 2_000
        var top: [UInt8] = [0xAF, 0x11, UInt8(copies >> 8), UInt8(copies & 0xFF)]
        top += Array(repeating: 1, count: copies)
        let data = Self.bplist(
            [top, [0xD2, 2, 3, 4, 5], [0x51, UInt8(ascii: "a")], [0x51, UInt8(ascii: "b")], [0x10, 1], [0x10, 2]])
        guard case .array(let list) = try PropertyList.decodeValue(data) else {
            Issue.record("not an array")
            return
        }
        #expect(list.count == copies)
        #expect(list.allSatisfy { $0 == .dictionary(["a": .integer(1), "b": .integer(2)]) })
        let storages = Set(
            list.map { value -> ObjectIdentifier? in
                guard case .dictionary(let dictionary) = value else { return nil }
                return unsafeBitCast(dictionary, to: ObjectIdentifier.self)
            })
        #expect(storages.count == 1, "one decoded dictionary, shared by every copy")
    }

    @Test func sharedReferencesCannotExplode() {
        // Object i is an array holding object i+1 twice: 2^40 leaves from a few hundred bytes.
        var objects: [[UInt8]] = (0..<40).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        objects.append([0x10, 1])
        expectDecodeError(Self.bplist(objects), kind: .corrupt)
    }

    @Test func sharedScalarsAreFine() throws {
        // Foundation shares equal scalars; a tree referencing one object many times is normal.
        let data = Self.bplist([[0xAF, 0x10, 100] + [UInt8](repeating: 1, count: 100), [0x10, 7]])
        let list = try #require(try PropertyList.decodeBinary(data) as? [Any])
        #expect(list.count == 100)
    }

    @Test func outOfRangeStructure() {
        expectDecodeError(Self.bplist([[0xA1, 5]]), kind: .corrupt)  // reference past the object count
        expectDecodeError(Self.bplist([[0x10, 1]], top: 3), kind: .corrupt)
        expectDecodeError(Self.bplist([[0x10, 1]], objectCount: 1 << 62), kind: .corrupt)
        expectDecodeError(Self.bplist([[0x10, 1]], tableOffset: UInt64.max), kind: .corrupt)
        expectDecodeError(Self.bplist([[0x10, 1]], offsetSize: 0), kind: .corrupt)
        expectDecodeError(Self.bplist([[0x10, 1]], referenceSize: 9), kind: .corrupt)
        // A huge length.
        expectDecodeError(Self.bplist([[0x5F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]), kind: .corrupt)
        expectDecodeError(Self.bplist([[0xAF, 0x12, 0x7F, 0xFF, 0xFF, 0xFF]]), kind: .corrupt)
        expectDecodeError(Self.bplist([[0x6F, 0x11, 0x10, 0x00, 0x00, 0x41]]), kind: .corrupt)
        expectDecodeError(Self.bplist([[0x15, 1, 2, 3]]), kind: .corrupt)  // 32-byte integer
        expectDecodeError(Self.bplist([[0x14, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]]), kind: .outOfRange)
        expectDecodeError(Self.bplist([[0x00]]), kind: .corrupt)  // null
        expectDecodeError(Self.bplist([[0x0F]]), kind: .corrupt)  // fill
        expectDecodeError(Self.bplist([[0x80, 1]]), kind: .corrupt)  // UID
        expectDecodeError(Self.bplist([[0xD1, 1, 1], [0x10, 1]]), kind: .corrupt)  // integer key
        expectDecodeError(Data("bplist00".utf8), kind: .truncated)
    }

    @Test func deepBinaryNesting() {
        // 600 arrays each holding the next: deeper than the limit.
        let objects: [[UInt8]] = (0..<600).map { $0 < 599 ? [0xA1, 0, 0] : [0xA0] }
        // Two-byte references.
        let data = Self.bplist(
            objects.enumerated().map { index, object in
                index < 599 ? [0xA1, UInt8((index + 1) >> 8), UInt8((index + 1) & 0xFF)] : object
            },
            referenceSize: 2
        )
        expectDecodeError(data, kind: .tooDeep)
    }
}
