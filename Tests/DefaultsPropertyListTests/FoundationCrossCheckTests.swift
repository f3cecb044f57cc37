import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

@Suite("Cross-checks against Foundation's PropertyListSerialization", .mayBlock)
struct FoundationCrossCheckTests {
    @Test func foundationReadsOurXML() throws {
        var generator = ValueGenerator(random: SeededGenerator(seed: 1))
        for _ in 0..<200 {
            let value = generator.value()
            let fromFoundation = try foundationDecode(try PropertyList.encodeXML(value))
            #expect(PropertyList.isEqual(fromFoundation, value), "\(fromFoundation) != \(value)")
        }
    }

    @Test func weReadFoundationsXMLAndBinary() throws {
        var generator = ValueGenerator(random: SeededGenerator(seed: 2))
        for _ in 0..<200 {
            let value = generator.value()
            let xml = try foundationEncode(value, .xml)
            let binary = try foundationEncode(value, .binary)
            let fromXML = try PropertyList.decode(xml)
            let fromBinary = try PropertyList.decode(binary)
            #expect(PropertyList.isEqual(fromXML, value), "XML: \(fromXML) != \(value)")
            #expect(PropertyList.isEqual(fromBinary, value), "binary: \(fromBinary) != \(value)")
        }
    }

    @Test func binaryKeepsFractionalDatesAndFloats() throws {
        let value: [String: Any] = [
            "date": Date(timeIntervalSinceReferenceDate: 1234.5678),
            "float": Float(0.1),
            "tiny": Double.leastNonzeroMagnitude,
            "list": Array(0..<300),
            "long": String(repeating: "é", count: 300),
        ]
        let decoded = try PropertyList.decodeBinary(try foundationEncode(value, .binary))
        #expect(PropertyList.isEqual(decoded, try PropertyList.normalize(value)))
    }

    @Test func ourXMLIsByteForByteFoundations() throws {
        // With ASCII keys and reals that Foundation also prints in shortest form, the layouts must match exactly.
        var generator = ValueGenerator(random: SeededGenerator(seed: 3), foundationExactReals: true, asciiKeys: true)
        for _ in 0..<200 {
            let value = generator.value()
            let ours = try PropertyList.encodeXML(value)
            let theirs = try foundationEncode(value, .xml)
            #expect(
                ours == theirs,
                "\n\(String(decoding: ours, as: UTF8.self))\n---\n\(String(decoding: theirs, as: UTF8.self))")
        }
    }

    @Test func dataLineWrappingMatchesAtEveryDepth() throws {
        var value: Any = Data((0..<200).map { UInt8($0) })
        for _ in 0..<12 {
            value = [value, Data([1, 2, 3])]
            #expect(try PropertyList.encodeXML(value) == foundationEncode(value, .xml))
        }
    }

    @Test func plutilAcceptsOurOutput() throws {
        let plutil = URL(fileURLWithPath: "/opt/swift/usr/bin/plutil")
        try #require(FileManager.default.isExecutableFile(atPath: plutil.path), "plutil is not installed here")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plutil-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = ValueGenerator(random: SeededGenerator(seed: 4))
        var files: [String] = []
        for index in 0..<20 {
            let file = directory.appendingPathComponent("\(index).plist")
            try PropertyList.encodeXML(["root": generator.value(), "index": index]).write(to: file)
            files.append(file.path)
        }
        let result = try ChildProcess.run(plutil.path, ["-lint"] + files)
        #expect(result.status == 0, "\(result)")
        #expect(result.output.components(separatedBy: ": OK").count - 1 == files.count, "\(result)")
    }

    @Test func tenThousandKeysMatchFoundation() throws {
        var dictionary: [String: Any] = [:]
        for index in 0..<10_000 { dictionary["key\(index)"] = index % 3 == 0 ? "value \(index)" : index }
        let ours = try PropertyList.encodeXML(dictionary)
        #expect(ours == (try foundationEncode(dictionary, .xml)))
        let decoded = try PropertyList.decode(ours)
        #expect(PropertyList.isEqual(decoded, dictionary))
    }
}
