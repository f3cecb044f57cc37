import Foundation
import TestSupport
import Testing

/// A value from another machine that the local key cannot read (another version of the program
/// stores another type under the name) is kept aside: not applied, not answered, reported.
@Suite(.enabled(if: TestingMachine.isAvailable, "the helper is built with the tests"), .mayBlock)
struct UnreadableRemoteValueTests {
    @Test func aValueOfAnotherTypeIsKeptAsideAndReported() async throws {
        let machine = try await TestingMachine()
        try await machine.send("set-integer fontSize 14")
        _ = try await machine.waitForSync()

        // Another version of the program stores the setting as a string.
        try await machine.send("peer-set fontSize big")
        try await machine.waitUntil("the value to be kept aside") {
            try await machine.send("status", answer: "status").contains("aside=fontSize ")
        }
        #expect(try await machine.value("get-integer", "fontSize", answer: "value") == "14", "not read as the default")
        let problems = try await machine.send("problems", answer: "problems")
        #expect(problems.contains("wrongType:fontSize"), "\(problems)")
        // Nothing was pushed back over the other machine's value.
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("fontSize") == "big")

        // A value the key reads arrives: applied, and nothing stays aside.
        try await machine.send("peer-set-integer fontSize 16")
        try await machine.waitUntil("the readable value to be applied") {
            try await machine.value("get-integer", "fontSize", answer: "value") == "16"
        }
        #expect(try await machine.send("status", answer: "status").contains("aside= "))
        try await machine.quit()
    }
}
