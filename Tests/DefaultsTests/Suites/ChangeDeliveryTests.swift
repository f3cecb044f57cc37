import Defaults
import DefaultsPropertyList
import Foundation
import Synchronization
import TestSupport
import Testing

/// Every change is posted once, naming the keys whose read value changed, with where it came
/// from: the store's edits (a file found changed by a reload or by a write) and the suites that
/// resolve their own values (`UserDefaultsSuite`, a suite of the application's own) alike.
@Suite(.timeLimit(.minutes(1)), .mayBlock)
struct ChangeDeliveryTests {
    @Test("A reload posts another process's change once, as otherProcess; keys it cannot be read under are left out")
    func reloadPostsThroughTheStore() async throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["locked": 1], to: sandbox.managedURL(in: sandbox.first))
        let suite = sandbox.suite(arguments: ["-argued", "5"])
        let recorder = FileSuiteChangeRecorder(suite)
        // Another process's write: a new file renamed into place.
        try PropertyList.encodeXML(["changed": 1, "locked": 9, "argued": 7])
            .write(to: sandbox.user.fileURL(sandbox.name), options: .atomic)
        suite.reload()
        try await recorder.wait { $0.keys.contains("changed") }
        #expect(suite.object(forKey: "changed") as? Int == 1)
        #expect(suite.object(forKey: "locked") as? Int == 1)
        #expect(suite.object(forKey: "argued") as? String == "5")
        #expect(recorder.changes == [SuiteChange(keys: ["changed"], origin: .otherProcess)])
    }

    @Test("A write that merges another process's change posts it as otherProcess, and its own as thisProcess")
    func mergePostsEachWithItsOrigin() async throws {
        let directory = try FileSuiteTemporaryDirectory()
        let suite = directory.suite()
        suite.set(1, forKey: "mine")
        try suite.flush()
        let recorder = FileSuiteChangeRecorder(suite)
        var file = try directory.storedValues()
        file["theirs"] = 2
        try PropertyList.encodeXML(file).write(to: directory.fileURL(), options: .atomic)
        suite.set(3, forKey: "mine")
        try suite.flush()
        // The merge (or the watcher's reload, if it came first) has posted it.
        try await recorder.wait { $0.keys.contains("theirs") }
        #expect(suite.object(forKey: "theirs") as? Int == 2)
        let changes = recorder.changes
        #expect(changes.filter { $0.keys.contains("theirs") } == [SuiteChange(keys: ["theirs"], origin: .otherProcess)])
        #expect(changes.filter { $0.keys.contains("mine") } == [SuiteChange(keys: ["mine"], origin: .thisProcess)])
        #expect(try directory.storedValues()["mine"] as? Int == 3)
        #expect(try directory.storedValues()["theirs"] as? Int == 2)
    }

    @Test("UserDefaultsSuite posts one change per edit, naming only the keys whose read value changed")
    func userDefaultsSuitePostsWhatChanged() throws {
        let name = "swift-defaults-tests-\(UUID().uuidString)"
        TemporarySuites.remember(name)
        let suite = try #require(UserDefaultsSuite.named(name))
        // The registration domain is the process's: keys of this test's own.
        let (same, registered, new) = ("same-\(name)", "registered-\(name)", "new-\(name)")
        suite.register(defaults: [registered: 2])
        suite.set(1, forKey: same)
        let recorder = FileSuiteChangeRecorder(suite)

        suite.setValues([(same, 1), (registered, 2), (new, 3), (new, 3)])
        #expect(recorder.changes == [SuiteChange(keys: [new])])
        #expect(suite.object(forKey: new) as? Int == 3)

        // Removing everything: the registered default is read again, unchanged.
        suite.removeAll()
        #expect(recorder.changes.dropFirst() == [SuiteChange(keys: [same, new])])
        #expect(suite.object(forKey: registered) as? Int == 2)
        #expect(suite.object(forKey: same) == nil)
    }

    @Test("A suite of the application's own posts one change for setValues, of the keys it changed")
    func defaultSetValuesPostsOnce() {
        let suite = ApplicationSuite()
        suite.set(1, forKey: "same")
        let recorder = FileSuiteChangeRecorder(suite)
        suite.setValues([("same", 1), ("new", 2), ("new", 3)])
        #expect(recorder.changes == [SuiteChange(keys: ["new"])])
        #expect(suite.object(forKey: "new") as? Int == 3)
        // Inside `withoutPropagation`, nothing.
        Defaults.withoutPropagation {
            suite.setValues([("new", 4)])
        }
        #expect(recorder.changes.count == 1)
    }
}
