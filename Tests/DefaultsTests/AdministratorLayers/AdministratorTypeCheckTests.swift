@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

/// An administrator's value that its key cannot read is ignored, reported naming the file, and a
/// read goes on to the next layer; writability follows what is enforced.
@Suite("Administrator layers: values of the wrong type, writability", .mayBlock)
struct AdministratorTypeCheckTests {
    @Test("A managed value of the wrong type is ignored: the user's value is read and can be written")
    func wrongTypedManagedValueIsIgnored() throws {
        let sandbox = try AdministratorSandbox()
        // The user's own value, stored before the administrator's file appeared.
        let before = FileSuite(name: sandbox.name, directory: sandbox.user.url, administratorDirectories: [])
        before.set(14, forKey: "fontSize")
        try before.flush()
        try sandbox.write(["fontSize": "big", "theme": "dark"], to: sandbox.managedURL(in: sandbox.first))
        let suite = sandbox.suite()
        let fontSize = Defaults.Key<Int>("fontSize", default: 12, suite: suite)
        let theme = Defaults.Key<String>("theme", default: "light", suite: suite)

        #expect(Defaults[fontSize] == 14)
        #expect(Defaults.writability(of: fontSize) == .writable)
        let problem = try #require(suite.problems.first { $0.kind == .wrongType })
        #expect(problem.key == "fontSize")
        #expect(problem.fileURL?.path == sandbox.managedURL(in: sandbox.first).path)
        #expect(problem.message.contains("Key<Swift.Int>(\"fontSize\")"), "\(problem.message)")
        Defaults[fontSize] = 16
        #expect(Defaults[fontSize] == 16)

        // A value the key reads is enforced as before.
        #expect(Defaults[theme] == "dark")
        #expect(Defaults.writability(of: theme) == .managed(file: sandbox.managedURL(in: sandbox.first)))
        #expect(suite.problems.filter { $0.kind == .wrongType }.count == 1, "reported once")
    }

    @Test("A vendor default of the wrong type is ignored: the next directory's, then the code's, is read")
    func wrongTypedVendorValueFallsThrough() throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.write(["volume": "loud", "speed": [1, 2]], to: sandbox.vendorURL(in: sandbox.first))
        try sandbox.write(["volume": 7], to: sandbox.vendorURL(in: sandbox.second))
        let suite = sandbox.suite()
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        let speed = Defaults.Key<Double>("speed", default: 1.5, suite: suite)
        #expect(Defaults[volume] == 7)
        #expect(Defaults[speed] == 1.5)
        let ignored = Set(suite.problems.filter { $0.kind == .wrongType }.compactMap(\.key))
        #expect(ignored == ["volume", "speed"])
    }

    @Test("A key declared after its wrong-typed managed value appeared is checked when declared")
    func keyDeclaredLaterIsChecked() async throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.makeManagedDirectory(in: sandbox.first)
        let suite = sandbox.suite()
        suite.set(true, forKey: "isOn")
        let recorder = FileSuiteChangeRecorder(suite)  // the administrator's files are watched while observed
        try sandbox.write(["isOn": "maybe"], to: sandbox.managedURL(in: sandbox.first))
        try await recorder.wait { $0.keys.contains("isOn") }
        #expect(suite.isManaged("isOn"), "no key says what isOn holds yet")
        let isOn = Defaults.Key<Bool>("isOn", default: false, suite: suite)
        #expect(Defaults[isOn] == true)
        #expect(!suite.isManaged("isOn"))
    }

    @Test("Writability is observed as another process adds and removes the managed file")
    func writabilityIsObservedAcrossProcesses() async throws {
        let sandbox = try AdministratorSandbox()
        try sandbox.makeManagedDirectory(in: sandbox.first)
        let suite = sandbox.suite()
        suite.set("mine", forKey: "server")
        let server = Defaults.Key<String>("server", default: "none", suite: suite)
        var updates = Defaults.writabilityUpdates(server).makeAsyncIterator()
        #expect(await updates.next() == .writable)

        // The same value enforced: the value does not change, its writability does.
        let managed = sandbox.managedURL(in: sandbox.first)
        let staged = sandbox.first.url.appendingPathComponent("staged.plist")
        try sandbox.write(["server": "mine"], to: staged)
        try runProcess("/bin/mv", [staged.path, managed.path])
        #expect(await updates.next() == .managed(file: managed))
        #expect(Defaults[server] == "mine")

        try runProcess("/bin/rm", [managed.path])
        #expect(await updates.next() == .writable)
    }

    private func runProcess(_ path: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
