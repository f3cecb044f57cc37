@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

@Suite("Administrator layers: vendor defaults and managed values", .mayBlock)
struct AdministratorLayersTests {
    @Test("A vendor value is below the user's and above the code default; reset returns to it")
    func vendorDefaults() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["volume": 6], to: sandbox.vendorURL(in: sandbox.first))
        let suite = sandbox.suite()
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        let other = Defaults.Key<Int>("other", default: 1, suite: suite)
        #expect(Defaults[volume] == 6)
        #expect(Defaults[other] == 1)
        Defaults[volume] = 9
        #expect(Defaults[volume] == 9)
        try suite.flush()
        // The user's file holds only the user's value, never the vendor's.
        #expect(try sandbox.user.storedValues(sandbox.name)["volume"] as? Int == 9)
        Defaults.reset(volume)
        #expect(Defaults[volume] == 6)
        try suite.flush()
        #expect(try sandbox.user.storedValues(sandbox.name)["volume"] == nil)
        #expect(suite.persistentValues()["volume"] == nil)
    }

    @Test("The first listed directory wins, for vendor and managed files alike")
    func firstDirectoryWins() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["theme": "first", "onlySecond": "x"], to: sandbox.vendorURL(in: sandbox.first))
        try sandbox.write(["theme": "second", "onlySecond": "second"], to: sandbox.vendorURL(in: sandbox.second))
        try sandbox.write(["mode": "first"], to: sandbox.managedURL(in: sandbox.first))
        try sandbox.write(["mode": "second", "level": 2], to: sandbox.managedURL(in: sandbox.second))
        let suite = sandbox.suite()
        #expect(suite.object(forKey: "theme") as? String == "first")
        #expect(suite.object(forKey: "onlySecond") as? String == "x")
        #expect(suite.object(forKey: "mode") as? String == "first")
        #expect(suite.object(forKey: "level") as? Int == 2)
        #expect(suite.valueSource(forKey: "mode") == .managed(sandbox.managedURL(in: sandbox.first)))
        #expect(suite.valueSource(forKey: "level") == .managed(sandbox.managedURL(in: sandbox.second)))
    }

    @Test("A managed value wins over the user's file and launch arguments")
    func managedWins() throws {
        let sandbox = try AdministratorSandbox()
        try PropertyList.encodeXML(["proxy": "user.example"]).write(to: sandbox.user.fileURL(sandbox.name))
        try sandbox.write(["proxy": "corp.example"], to: sandbox.managedURL(in: sandbox.first))
        let suite = sandbox.suite(arguments: ["-proxy", "argument.example"])
        #expect(suite.object(forKey: "proxy") as? String == "corp.example")
        #expect(suite.isManaged("proxy"))
        #expect(!suite.isManaged("other"))
        // The user's value is still there, under the managed one.
        #expect(suite.persistentValues()["proxy"] as? String == "user.example")
    }

    @Test("Writing a managed key changes nothing and is reported; the other keys are written")
    func managedWriteRefused() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["locked": true], to: sandbox.managedURL(in: sandbox.first))
        let suite = sandbox.suite()
        let reported = FileSuiteProblemRecorder(suite)
        let recorder = FileSuiteChangeRecorder(suite)
        suite.set(false, forKey: "locked")
        suite.set(nil, forKey: "locked")
        suite.setValues([("locked", false), ("free", 1)])
        // Through every other door as well: a key's read-modify-write, and the suite's.
        let locked = Defaults.Key<Bool>("locked", default: false, suite: suite)
        Defaults.modify(locked) { $0.toggle() }
        suite.modify(forKey: "locked") { $0 = false }
        try suite.flush()
        #expect(suite.object(forKey: "locked") as? Bool == true)
        #expect(suite.object(forKey: "free") as? Int == 1)
        let stored = try sandbox.user.storedValues(sandbox.name)
        #expect(stored["locked"] == nil)
        #expect(stored["free"] as? Int == 1)
        let problems = suite.problems.filter { $0.kind == .managedKey }
        #expect(problems.count == 5)
        #expect(problems.allSatisfy { $0.fileURL == sandbox.managedURL(in: sandbox.first) })
        #expect(problems.first?.message.contains(sandbox.managedURL(in: sandbox.first).path) == true)
        #expect(reported.kinds.filter { $0 == .managedKey }.count == 5)
        #expect(!recorder.changes.contains { $0.keys.contains("locked") })
    }

    @Test("Each source of a value is told apart")
    func valueSources() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["vendor": 1, "user": 1], to: sandbox.vendorURL(in: sandbox.second))
        try sandbox.write(["managed": 1], to: sandbox.managedURL(in: sandbox.first))
        try PropertyList.encodeXML(["user": 2, "argument": 2]).write(to: sandbox.user.fileURL(sandbox.name))
        let suite = sandbox.suite(arguments: ["-argument", "3"])
        suite.register(defaults: ["code": 4, "vendor": 4])
        #expect(suite.valueSource(forKey: "managed") == .managed(sandbox.managedURL(in: sandbox.first)))
        #expect(suite.valueSource(forKey: "argument") == .argument)
        #expect(suite.valueSource(forKey: "user") == .user(suite.fileURL))
        #expect(suite.valueSource(forKey: "vendor") == .vendor(sandbox.vendorURL(in: sandbox.second)))
        #expect(suite.valueSource(forKey: "code") == .codeDefault)
        #expect(suite.valueSource(forKey: "absent") == nil)
        #expect(suite.object(forKey: "vendor") as? Int == 1)
    }

    @Test("A launch argument that removes a value falls back to the vendor value")
    func absentArgumentFallsToVendor() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["name": "vendor"], to: sandbox.vendorURL(in: sandbox.first))
        try PropertyList.encodeXML(["name": "user"]).write(to: sandbox.user.fileURL(sandbox.name))
        let suite = sandbox.suite(arguments: ["-name", "<swift-defaults:absent/>"])
        #expect(suite.object(forKey: "name") as? String == "vendor")
        #expect(suite.valueSource(forKey: "name") == .vendor(sandbox.vendorURL(in: sandbox.first)))
    }
}

@Suite("README: administrator layers", .mayBlock)
struct AdministratorLayersReadmeTests {
    @Test("The README's example, with the test's directories")
    func example() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["proxy": "corp.example"], to: sandbox.managedURL(in: sandbox.first))
        let settings = sandbox.suite()
        #expect(settings.isManaged("proxy"))
        #expect(settings.valueSource(forKey: "proxy") == .managed(sandbox.managedURL(in: sandbox.first)))
        #expect(
            settings.valueSource(forKey: "proxy")?.description
                == "managed \(sandbox.managedURL(in: sandbox.first).path)")
    }
}
