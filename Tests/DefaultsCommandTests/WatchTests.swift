import Defaults
import Foundation
import TestSupport
import Testing

/// `defaults watch` in one process, changes made by others.
@Suite("watch", .mayBlock)
struct WatchTests {
    /// Starts `watch` and waits until it says it is watching.
    private func startWatching(_ sandbox: CommandSandbox, _ arguments: String...) throws -> ChildProcess {
        let watch = try sandbox.start(["watch"] + arguments)
        _ = try watch.line(.error) { $0.hasPrefix("Watching ") }
        return watch
    }

    @Test func printsChangesFromOtherProcesses() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.watched", "before", "1")
        let watch = try startWatching(sandbox, "com.example.watched")
        #expect(try sandbox.run("write", "com.example.watched", "greeting", "-string", "hello").status == 0)
        try watch.waitForLines { $0.count >= 1 }
        #expect(try sandbox.run("write", "com.example.watched", "greeting", "-string", "hello world").status == 0)
        try watch.waitForLines { $0.count >= 2 }
        #expect(try sandbox.run("write", "com.example.watched", "list", "-array", "a", "-int", "2").status == 0)
        try watch.waitForLines { $0.count >= 3 }
        #expect(try sandbox.run("delete", "com.example.watched", "before").status == 0)
        try watch.waitForLines { $0.count >= 4 }
        watch.signal(SIGTERM)
        #expect(try watch.finish().termination == .exited(0))
        #expect(
            watch.lines() == [
                "greeting = hello;", "greeting = \"hello world\";", "list = ( a, 2 );", "before deleted",
            ])
        #expect(watch.lines(.error) == ["Watching com.example.watched (Control-C to stop)"])
    }

    @Test func printsChangesFromALibraryProcess() throws {
        let sandbox = try CommandSandbox()
        let watch = try startWatching(sandbox, "com.example.watched")
        let suite = FileSuite(name: "com.example.watched", directory: sandbox.directory, arguments: [])
        suite.set(5, forKey: "volume")
        try suite.flush()
        try watch.waitForLines { $0.count >= 1 }
        suite.set(nil, forKey: "volume")
        try suite.flush()
        try watch.waitForLines { $0.count >= 2 }
        watch.signal(SIGINT)
        #expect(try watch.finish().termination == .exited(0))
        #expect(watch.lines() == ["volume = 5;", "volume deleted"])
    }

    @Test func oneKeyAsJSON() throws {
        let sandbox = try CommandSandbox()
        let watch = try startWatching(sandbox, "--json", "-g", "theme")
        #expect(try sandbox.run("write", "-g", "other", "-int", "1").status == 0)
        #expect(try sandbox.run("write", "-g", "theme", "-string", "dark \"mode\"").status == 0)
        try watch.waitForLines { $0.count >= 1 }
        #expect(try sandbox.run("write", "-g", "theme", "-dict", "a", "-int", "1").status == 0)
        try watch.waitForLines { $0.count >= 2 }
        #expect(try sandbox.run("delete", "-g").status == 0)
        try watch.waitForLines { $0.count >= 3 }
        watch.signal(SIGTERM)
        #expect(try watch.finish().termination == .exited(0))
        #expect(
            watch.lines() == [
                #"{"key":"theme","value":"dark \"mode\""}"#,
                #"{"key":"theme","value":{"a":1}}"#,
                #"{"key":"theme","deleted":true}"#,
            ]
        )
    }

    /// Each key is watched by a library observer: a write that leaves the value as it was prints
    /// nothing, and a key that appears, goes and comes back is printed each time.
    @Test func printsWhatALibraryObserverSees() throws {
        let sandbox = try CommandSandbox()
        try sandbox.run("write", "com.example.observed", "count", "-int", "1")
        let watch = try startWatching(sandbox, "com.example.observed")
        #expect(try sandbox.run("write", "com.example.observed", "count", "-int", "1").status == 0)
        #expect(try sandbox.run("write", "com.example.observed", "count", "-int", "2").status == 0)
        try watch.waitForLines { $0.count >= 1 }
        #expect(try sandbox.run("write", "com.example.observed", "fresh", "-string", "yes").status == 0)
        try watch.waitForLines { $0.count >= 2 }
        #expect(try sandbox.run("delete", "com.example.observed", "fresh").status == 0)
        try watch.waitForLines { $0.count >= 3 }
        #expect(try sandbox.run("write", "com.example.observed", "fresh", "-int", "3").status == 0)
        try watch.waitForLines { $0.count >= 4 }
        watch.signal(SIGTERM)
        #expect(try watch.finish().termination == .exited(0))
        #expect(watch.lines() == ["count = 2;", "fresh = yes;", "fresh deleted", "fresh = 3;"])
    }
}
