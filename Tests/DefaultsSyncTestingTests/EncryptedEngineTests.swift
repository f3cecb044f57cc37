import Foundation
import TestSupport
import Testing

/// `Defaults.iCloud` through an end-to-end encrypted in-memory store, against a hostile server:
/// what a token holder or someone with the database does is never applied, and is reported.
@Suite(.enabled(if: TestingMachine.isAvailable, "the helper is built with the tests"), .mayBlock)
struct EncryptedEngineTests {
    static let passphrase = "correct horse battery staple"

    @Test func anUnsealedRemovalIsNeverAppliedAndIsReported() async throws {
        let machine = try await TestingMachine(passphrase: Self.passphrase)
        try await machine.send("set diary meet-at-the-old-mill")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("diary") == "meet-at-the-old-mill")

        try await machine.send("unsealed-removal diary")
        try await machine.waitUntil("the machine to report the tampering") {
            try await machine.send("tampering", answer: "tampering").contains("was not sealed with the passphrase")
        }
        #expect(try await machine.get("diary") == "meet-at-the-old-mill", "the removal was not applied")
        #expect(try await machine.onServer("diary") == "(none)", "nor taken by another device")
        try await machine.waitUntil("the tampering to be logged") { machine.log.contains("tampering") }
        try await machine.quit()
    }

    @Test func anOlderValuePutBackIsReportedAndTheNewerOneIsPushedAgain() async throws {
        let machine = try await TestingMachine(passphrase: Self.passphrase)
        try await machine.send("set diary first-draft")
        _ = try await machine.waitForSync()
        try await machine.send("snapshot")
        try await machine.send("set diary final")
        _ = try await machine.waitForSync()
        try await machine.waitUntil("the peer to receive the final value") {
            try await machine.value("received", "diary", answer: "received") == "final"
        }

        // Someone with the database puts the older sealed value back, with its version.
        try await machine.send("rollback diary")
        try await machine.waitUntil("the machine to report the rollback") {
            try await machine.send("tampering", answer: "tampering").contains("rollback")
        }
        // The machine catches up in full and pushes its newer value again: they converge.
        try await machine.waitUntil("the newer value to be on the server again") {
            try await machine.onServer("diary") == "final"
        }
        #expect(try await machine.get("diary") == "final", "the older value was never applied")
        #expect(machine.log.contains("rollback"))
        try await machine.quit()
    }
}
