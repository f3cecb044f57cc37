import Foundation
import TestSupport
import Testing

/// `Defaults.iCloud` through the in-memory store: a machine in a child process (a process has one
/// `Defaults.iCloud`), another at the store's level on the same server.
@Suite(.enabled(if: TestingMachine.isAvailable, "the helper is built with the tests"), .mayBlock)
struct EngineRoundTripTests {
    @Test func aReceivedRecordIsAppliedAndALocalWriteIsPushed() async throws {
        let machine = try await TestingMachine()
        _ = try await machine.get("greeting")  // declared, before anything is on the server
        try await machine.send("peer-set greeting hello")
        try await machine.waitUntil("the peer's value to be applied") { try await machine.get("greeting") == "hello" }

        try await machine.send("set answer 42")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("answer") == "42")
        try await machine.waitUntil("the peer to receive it") {
            try await machine.value("received", "answer", answer: "received") == "42"
        }
        // A removal travels too.
        try await machine.send("reset answer")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("answer") == "(nil)")
        try await machine.quit()
    }

    @Test func failedPushesAreRetriedAndAnOutageLosesNothing() async throws {
        let machine = try await TestingMachine()
        _ = try await machine.waitForSync()
        let before = Int(try await machine.send("pushes", answer: "pushes").dropFirst("pushes ".count)) ?? -1
        try await machine.send("fail-pushes 2")
        try await machine.send("set retried yes")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("retried") == "yes")
        let after = Int(try await machine.send("pushes", answer: "pushes").dropFirst("pushes ".count)) ?? -1
        #expect(after >= before + 1, "the third attempt reached the server")

        try await machine.send("disconnect")
        try await machine.waitUntil("the disconnection to show") {
            try await machine.send("status", answer: "status").contains("connected=false")
        }
        try await machine.send("set offline kept")
        try await machine.send("peer-set remote while-away")
        #expect(try await machine.send("status", answer: "status").contains("pending=1"))
        #expect(try await machine.onServer("offline") == "(none)")
        try await machine.send("reconnect")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("offline") == "kept")
        try await machine.waitUntil("the change missed while away to arrive") {
            try await machine.get("remote") == "while-away"
        }
        try await machine.quit()
    }

    @Test func aRefusedKeyIsReportedAndTheOthersSync() async throws {
        let machine = try await TestingMachine()
        try await machine.send("refuse rejected")
        try await machine.send("set rejected 1")
        try await machine.send("set accepted 2")
        let status = try await machine.waitForSync()
        #expect(status.contains("refused=1"), "\(status)")
        #expect(try await machine.onServer("accepted") == "2")
        #expect(try await machine.onServer("rejected") == "(none)")
        // The journal's summary, read from disk as `defaults-sync status` reads it, says the same.
        let journal = try await machine.send("journal", answer: "journal pending=")
        #expect(journal.hasPrefix("journal pending=0 refused=1 "), "\(journal)")
        try await machine.quit()
    }
}
