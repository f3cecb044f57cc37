// Writes a seed corpus for the fuzzer: property lists made by Foundation in
// XML and binary, plus a few old-style and fragment inputs.
import Foundation

@main
struct SeedCorpus {
    static func main() throws {
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: seed-corpus DIRECTORY\n".utf8))
            exit(2)
        }
        let directory = URL(fileURLWithPath: CommandLine.arguments[1], isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let values: [Any] = [
            [
                "name": "swift", "count": 3, "ratio": 0.25, "on": true, "off": false,
                "when": Date(timeIntervalSinceReferenceDate: 725_803_200.5), "blob": Data([0, 1, 2, 254, 255]),
            ],
            [1, -1, Int64.min, Int64.max, UInt64.max, 1.5, Double.infinity, Double.nan, "<&>", "émoji 😀"],
            ["nested": ["deeper": [["deepest": [Data(count: 100)]]]], "empty": [String: Any](), "list": [Any]()],
            "just a string",
            42,
            Data((0..<300).map { UInt8($0 & 0xFF) }),
            Dictionary(uniqueKeysWithValues: (0..<40).map { ("key\($0)", $0 % 2 == 0 ? "v\($0)" as Any : $0 as Any) }),
        ]
        var index = 0
        func write(_ data: Data) throws {
            try data.write(to: directory.appendingPathComponent(String(format: "seed-%03d", index)))
            index += 1
        }
        for value in values {
            try write(try PropertyListSerialization.data(fromPropertyList: value, format: .xml, options: 0))
            try write(try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0))
        }
        for text in [
            "{ a = 1; b = (x, \"y z\"); c = <0102 03>; d = { e = \"\\U00e9\\n\"; }; }",
            "(1, 2, 3)", "<integer>5</integer>", "<array><true/><real>1.5</real></array>",
            "<dict><key>k</key><string>&lt;&#x41;<![CDATA[x]]></string></dict>", "key = value; other = \"x\";",
        ] {
            try write(Data(text.utf8))
        }
        print("wrote \(index) seed inputs to \(directory.path)")
    }
}
