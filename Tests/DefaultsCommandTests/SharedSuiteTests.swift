import Defaults
import DefaultsPropertyList
import Foundation
import Synchronization
import TestSupport
import Testing

/// The library in this process and the command in another share a suite.
@Suite("shared with a running process", .mayBlock)
struct SharedSuiteTests {
    @Test func commandWriteReachesTheProcessChangeStream() async throws {
        let sandbox = try CommandSandbox()
        let suite = FileSuite(name: "com.example.shared", directory: sandbox.directory, arguments: [])
        let changes = Mutex<[SuiteChange]>([])
        let token = suite.changes.addObserver(forKeys: ["greeting"]) { change in
            changes.withLock { $0.append(change) }
        }
        defer { suite.changes.removeObserver(token) }

        let write = try sandbox.run("write", "com.example.shared", "greeting", "-string", "hello")
        #expect(write.status == 0, "\(write)")
        try await waitUntil { changes.withLock { !$0.isEmpty } }
        #expect(changes.withLock { $0.first } == SuiteChange(keys: ["greeting"], origin: .otherProcess))
        #expect(suite.object(forKey: "greeting") as? String == "hello")
    }

    /// The command's edits are one more door into a suite: each (`write`, `import`, `rename`,
    /// `delete`) reaches a running process as one change with exactly the keys whose value it
    /// changed.
    @Test func eachCommandEditIsOneChangeOfTheKeysItChanged() async throws {
        let sandbox = try CommandSandbox()
        let suite = FileSuite(name: "com.example.shared", directory: sandbox.directory, arguments: [])
        let changes = Mutex<[SuiteChange]>([])
        let token = suite.changes.addObserver { change in changes.withLock { $0.append(change) } }
        defer { suite.changes.removeObserver(token) }
        let imported = try PropertyList.encodeXML(["a": 1, "b": 2, "c": 3] as [String: Any])
        let edits: [(arguments: [String], input: Data?, keys: Set<String>)] = [
            (["write", "com.example.shared", "a", "-int", "1"], nil, ["a"]),
            (["import", "com.example.shared", "-"], imported, ["b", "c"]),
            (["rename", "com.example.shared", "b", "d"], nil, ["b", "d"]),
            (["delete", "com.example.shared", "c"], nil, ["c"]),
        ]
        for (index, edit) in edits.enumerated() {
            let result = try sandbox.run(edit.arguments, input: edit.input)
            #expect(result.status == 0, "\(result)")
            try await waitUntil("the change of \(edit.arguments)") { changes.withLock { $0.count } > index }
        }
        #expect(changes.withLock { $0 } == edits.map { SuiteChange(keys: $0.keys, origin: .otherProcess) })
        #expect(suite.persistentValues().keys.sorted() == ["a", "d"])
    }

    @Test func commandWriteReachesAnUpdatesLoop() async throws {
        let sandbox = try CommandSandbox()
        let suite = FileSuite(name: "com.example.shared", directory: sandbox.directory, arguments: [])
        let key = Defaults.Key<Int>("volume", default: 0, suite: suite)
        let received = Mutex<[Int]>([])
        let task = Task {
            for await value in Defaults.updates(key) {
                received.withLock { $0.append(value) }
            }
        }
        defer { task.cancel() }
        try await waitUntil { received.withLock { $0 } == [0] }

        #expect(try sandbox.run("write", "com.example.shared", "volume", "-int", "7").status == 0)
        try await waitUntil { received.withLock { $0.last } == 7 }
        #expect(try sandbox.run("write", "com.example.shared", "volume", "-int", "9").status == 0)
        try await waitUntil { received.withLock { $0.last } == 9 }
        #expect(try sandbox.run("delete", "com.example.shared", "volume").status == 0)
        try await waitUntil { received.withLock { $0.last } == 0 }
        #expect(received.withLock { $0 } == [0, 7, 9, 0])
    }

    @Test func valueWrittenByTheProcessIsReadByTheCommand() throws {
        let sandbox = try CommandSandbox()
        let suite = FileSuite(name: "com.example.shared", directory: sandbox.directory, arguments: [])
        let key = Defaults.Key<String>("theme", default: "light", suite: suite)
        Defaults[key] = "dark"
        suite.set([1, 2, 3], forKey: "recent")
        try suite.flush()
        let read = try sandbox.run("read", "com.example.shared")
        #expect(
            read.output == "{\n    recent =     (\n        1,\n        2,\n        3\n    );\n    theme = dark;\n}\n",
            "\(read)")
        #expect(try sandbox.run("read", "com.example.shared", "theme").output == "dark\n")
    }

    @Test func commandKeepsTheKeysOfAProcessWritingAtTheSameTime() throws {
        let sandbox = try CommandSandbox()
        let suite = FileSuite(name: "com.example.shared", directory: sandbox.directory, arguments: [])
        suite.set("mine", forKey: "process")
        try suite.flush()
        // A change of the process not yet flushed when the command writes.
        suite.set("later", forKey: "pending")
        #expect(try sandbox.run("write", "com.example.shared", "command", "-int", "1").status == 0)
        try suite.flush()
        let values = try sandbox.storedValues("com.example.shared")
        #expect(PropertyList.isEqual(values, ["process": "mine", "pending": "later", "command": 1] as [String: Any]))
    }

    @Test func foundationReadsWhatTheCommandWrites() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.shared", "count", "-int", "4")
        // The file is Foundation's format, so another reader gets the same values.
        let data = try Data(contentsOf: sandbox.fileURL("com.example.shared"))
        let values = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        #expect(values?["count"] as? Int == 4)
    }
}
