@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

/// Foundation's `UserDefaults` and the file suite read each other's files, in real processes.
@Suite("FileSuite interop with Foundation", .mayBlock)
struct FileSuiteInteropTests {
    static func expectedSample() throws -> String {
        let result = try TestHelper.run(["sample-describe"])
        #expect(result.status == 0)
        return result.output
    }

    @Test func foundationReadsWhatTheFileSuiteWrites() throws {
        let directory = try FileSuiteTemporaryDirectory()
        try writeSampleWithFileSuite(directory: directory, name: "interop")
        let read = try TestHelper.run(
            ["foundation-read", "interop"], environment: ["XDG_CONFIG_HOME": directory.path])
        #expect(read.status == 0, "\(read.error)")
        #expect(read.output == (try Self.expectedSample()))
    }

    @Test func theFileSuiteReadsWhatFoundationWrites() throws {
        let directory = try FileSuiteTemporaryDirectory()
        let write = try TestHelper.run(
            ["foundation-write", "fromFoundation"], environment: ["XDG_CONFIG_HOME": directory.path])
        #expect(write.status == 0, "\(write.error)")
        // Foundation's own layout: mode 0600, in Foundation's file for the suite.
        #expect(try fileSuitePermissions(of: directory.fileURL("fromFoundation").path) == 0o600)
        let read = try TestHelper.run(["filesuite-describe", directory.path, "fromFoundation"])
        #expect(read.status == 0, "\(read.error)")
        #expect(read.output == (try Self.expectedSample()))

        // And in this process, through typed keys.
        let suite = directory.suite("fromFoundation")
        #expect(Defaults[Defaults.Key<Int>("int", default: 0, suite: suite)] == 42)
        #expect(Defaults[Defaults.Key<Bool>("bool", default: false, suite: suite)])
        #expect(Defaults[Defaults.Key<String>("string", default: "", suite: suite)] == "a < b & \"c\" é 🎉")
        #expect(
            ((suite.object(forKey: "dictionary") as? [String: Any])?["nested"] as? [String: Any])?["y"] as? Bool
                == false)
        #expect(
            Defaults[Defaults.Key<Date>("date", default: .distantPast, suite: suite)]
                == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func everyBuiltInTypeRoundTripsAcrossAProcessRestart() throws {
        let directory = try FileSuiteTemporaryDirectory()
        // The writer exits without flushing: the exit handler stores the values.
        let write = try TestHelper.run(["types-write", directory.path, "types"])
        #expect(write.status == 0, "\(write.error)")
        let read = try TestHelper.run(["types-read", directory.path, "types"])
        #expect(read.status == 0, "\(read.error)")
        #expect(read.output == "OK\n")
    }

    /// Writes the interop sample with the file suite in this process.
    func writeSampleWithFileSuite(directory: FileSuiteTemporaryDirectory, name: String) throws {
        let suite = directory.suite(name)
        for (key, value) in FileSuiteInteropSample.values {
            suite.set(value, forKey: key)
        }
        try suite.flush()
    }
}

/// The same values as the helper's `interopSample` (an executable's module cannot be imported by
/// tests on a clean build, so the sample is kept twice).
enum FileSuiteInteropSample {
    static var values: [String: Any] {
        [
            "int": 42,
            "negative": -7,
            "large": Int(Int64.max),
            "double": 3.25,
            "bool": true,
            "string": "a < b & \"c\" é 🎉",
            "date": Date(timeIntervalSince1970: 1_700_000_000),
            "data": Data([0, 1, 2, 254, 255]),
            "array": [1, "two", 3.5] as [Any],
            "dictionary": ["nested": ["x": 1, "y": false] as [String: Any]] as [String: Any],
        ]
    }
}
