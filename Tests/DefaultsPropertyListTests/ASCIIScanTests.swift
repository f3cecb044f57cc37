import DefaultsPropertyList
import Foundation
import Testing

/// Text that is not valid UTF-8 is refused wherever the first byte above 0x7F falls relative to
/// the eight-byte words the check reads, and valid text around it is read.
@Suite("UTF-8 check")
struct ASCIIScanTests {
    private func document(_ string: [UInt8]) -> Data {
        Data("<plist version=\"1.0\"><string>".utf8) + Data(string) + Data("</string></plist>".utf8)
    }

    @Test func invalidBytesAreRefusedAtEveryOffset() {
        for offset in 0..<20 {
            let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: offset) + [0xFF] + Array("tail".utf8)
            #expect(throws: PropertyListError.self, "offset \(offset)") { try PropertyList.decode(document(bytes)) }
        }
    }

    @Test func validTextAtEveryOffsetIsRead() throws {
        for offset in 0..<20 {
            let prefix = String(repeating: "a", count: offset)
            let decoded = try PropertyList.decode(document(Array((prefix + "é😀").utf8)))
            #expect(decoded as? String == prefix + "é😀")
        }
    }
}
