import Foundation
import Synchronization
import TestSupport
import Testing

@Suite("polling", .mayBlock)
struct PollingTests {
    /// A condition made true by another thread after a few looks.
    private final class Countdown: Sendable {
        private let remaining: Mutex<Int>
        init(_ count: Int) { remaining = Mutex(count) }
        /// Whether the countdown has reached zero; counts one down otherwise.
        func tick() -> Bool {
            remaining.withLock { count in
                count -= 1
                return count <= 0
            }
        }
    }

    @Test func waitsUntilTheConditionHolds() async throws {
        let countdown = Countdown(5)
        try await waitUntil("the countdown") { countdown.tick() }
    }

    @Test func waitsUntilTheConditionHoldsOnAThread() throws {
        let countdown = Countdown(5)
        try waitUntil("the countdown") { countdown.tick() }
    }

    @Test func pollReturnsTheFirstValue() async throws {
        let countdown = Countdown(3)
        #expect(try await poll { countdown.tick() ? "done" : nil } == "done")
    }

    @Test func pollReturnsTheFirstValueOnAThread() throws {
        let countdown = Countdown(3)
        #expect(try poll { countdown.tick() ? 42 : nil } == 42)
    }

    @Test func aConditionThatNeverHoldsFailsNamingItAndItsPlace() async throws {
        do {
            try await waitUntil("a miracle", timeout: .milliseconds(50)) { false }
            Issue.record("the wait did not fail")
        } catch {
            let line = #line - 3
            #expect(
                "\(error)"
                    == "Timed out after 0.05 seconds waiting for a miracle (TestSupportTests/PollingTests.swift:\(line))"
            )
        }
    }

    @Test func aConditionThatNeverHoldsFailsOnAThread() throws {
        #expect(throws: WaitTimeout.self) { try waitUntil(timeout: .milliseconds(50)) { false } }
    }

    @Test func anErrorOfTheConditionIsPassedOn() async throws {
        struct Broken: Error {}
        await #expect(throws: Broken.self) { try await waitUntil { throw Broken() } }
    }

    @Test func withTimeoutReturnsTheBodysValueOrFails() async throws {
        #expect(try await withTimeout { 7 } == 7)
        await #expect(throws: WaitTimeout.self) {
            try await withTimeout("a stream that never ends", timeout: .milliseconds(50)) {
                for await _ in AsyncStream<Int>(unfolding: {
                    try? await Task.sleep(for: .seconds(600))
                    return nil
                }) {}
            }
        }
    }
}
