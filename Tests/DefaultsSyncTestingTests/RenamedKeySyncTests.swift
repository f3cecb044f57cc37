import Foundation
import TestSupport
import Testing

/// A key renamed in a newer version of a program (`fontSize`, `migrating: .renamed(from:
/// "textSize")`) reads the writes of machines still on the older version, which sync it under its
/// former name, and pushes only its new name: the older version's record is never written over.
@Suite(.enabled(if: TestingMachine.isAvailable, "the helper is built with the tests"), .mayBlock)
struct RenamedKeySyncTests {
    @Test func writesUnderTheFormerNameReachTheRenamedKey() async throws {
        let machine = try await TestingMachine()
        try await machine.send("declare-renamed fontSize textSize,size")
        _ = try await machine.waitForSync()

        // A machine with the older version writes its setting.
        try await machine.send("peer-set-integer textSize 14")
        try await machine.waitUntil("the older version's value to reach the renamed key") {
            try await machine.value("get-integer", "fontSize", answer: "value") == "14"
        }
        // And again, later.
        try await machine.send("peer-set-integer textSize 16")
        try await machine.waitUntil("the older version's later value to reach the renamed key") {
            try await machine.value("get-integer", "fontSize", answer: "value") == "16"
        }

        // The newer version writes: only the new name is pushed.
        try await machine.send("set-integer fontSize 18")
        _ = try await machine.waitForSync()
        #expect(try await machine.value("peer-get-integer", "fontSize", answer: "peer") == "18")
        #expect(try await machine.value("peer-get-integer", "textSize", answer: "peer") == "16")

        // A record of the former name older than the key's value is not applied: once a record
        // pushed after it has arrived, the key still holds its own value.
        #expect(try await machine.value("get-integer", "other", answer: "value") == "0")
        _ = try await machine.waitForSync()
        // (Under the older former name, which the server holds nothing of, so that it takes it.)
        try await machine.send("peer-set-integer-old size 9")
        try await machine.send("peer-set-integer other 5")
        try await machine.waitUntil("the record pushed after it to arrive") {
            try await machine.value("get-integer", "other", answer: "value") == "5"
        }
        #expect(try await machine.value("peer-get-integer", "size", answer: "peer") == "9")
        #expect(try await machine.value("get-integer", "fontSize", answer: "value") == "18")
        try await machine.quit()
    }

    /// A machine still on the older version holds its own, older value under the former name; a
    /// machine on the newer version wrote the new name since. When the older one is upgraded, its
    /// migration must not push its old value over the newer one.
    @Test func anUpgradedMachinesMigratedValueDoesNotWinOverANewerOne() async throws {
        let machine = try await TestingMachine()
        try await machine.send("store-integer textSize 12")
        _ = try await machine.waitForSync()
        try await machine.send("peer-set-integer fontSize 18")
        // The upgrade: the newer version declares the renamed key, which migrates the value here.
        try await machine.send("declare-renamed fontSize textSize")
        _ = try await machine.waitForSync()
        try await machine.waitUntil("the newer value to be read here") {
            try await machine.value("get-integer", "fontSize", answer: "value") == "18"
        }
        #expect(try await machine.value("peer-get-integer", "fontSize", answer: "peer") == "18")
        try await machine.quit()
    }

    @Test func aValueWrittenBeforeTheKeyIsDeclaredIsCaughtUp() async throws {
        let machine = try await TestingMachine()
        _ = try await machine.waitForSync()
        try await machine.send("peer-set-integer textSize 20")
        try await machine.send("declare-renamed fontSize textSize")
        try await machine.waitUntil("the catch-up of the former name") {
            try await machine.value("get-integer", "fontSize", answer: "value") == "20"
        }
        _ = try await machine.waitForSync()
        #expect(try await machine.value("peer-get-integer", "textSize", answer: "peer") == "20")
        try await machine.quit()
    }

    @Test func aValueTheKeyCannotConvertIsKeptAsideAndReported() async throws {
        let machine = try await TestingMachine()
        try await machine.send("declare-renamed fontSize textSize")
        try await machine.send("set-integer fontSize 12")
        _ = try await machine.waitForSync()

        try await machine.send("peer-set textSize big")
        try await machine.waitUntil("the value to be kept aside") {
            try await machine.send("status", answer: "status").contains("aside=textSize ")
        }
        #expect(try await machine.value("get-integer", "fontSize", answer: "value") == "12")
        let problems = try await machine.send("problems", answer: "problems")
        #expect(problems.contains("wrongType:textSize"), "\(problems)")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("textSize") == "big", "nothing pushed over it")
        try await machine.quit()
    }
}
