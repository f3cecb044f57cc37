import Defaults
import Foundation
import Synchronization
import Testing

@Suite("Hybrid logical clock")
struct HybridLogicalClockTests {
    /// A wall clock the test moves by hand.
    final class ManualClock: Sendable {
        let milliseconds = Mutex<Int64>(1_000_000)
        var date: Date { Date(timeIntervalSince1970: Double(milliseconds.withLock { $0 }) / 1000) }
        func move(by delta: Int64) { milliseconds.withLock { $0 += delta } }
    }

    @Test func timestampsIncreaseEvenWhenTheWallClockStandsStillOrGoesBack() {
        let wall = ManualClock()
        let clock = HybridLogicalClock(origin: "a", wallClock: { wall.date })
        var previous = clock.now()
        for step in [0, 0, -500, 10, -10_000, 0] as [Int64] {
            wall.move(by: step)
            let next = clock.now()
            #expect(next > previous)
            previous = next
        }
    }

    @Test func theVersionAfterTheLargestIsNone() {
        let version = { (wall: Int64, counter: Int64) in SyncTimestamp(wallTime: wall, counter: counter, origin: "o") }
        #expect(version(5, 2).successor(origin: "p") == SyncTimestamp(wallTime: 5, counter: 3, origin: "p"))
        #expect(version(5, .max).successor(origin: "p") == SyncTimestamp(wallTime: 6, counter: 0, origin: "p"))
        #expect(version(.max, .max).successor(origin: "p") == nil)
    }

    /// A stamp from another machine or a row is input: one at the last counter must not make the
    /// next local change trap on an overflow, and one further ahead than clocks disagree (up to
    /// the largest version there is) is not taken in, or every later change would carry it.
    @Test func aHostileStampAtTheLastCounterOrFarAheadNeitherTrapsNorStopsTheClock() {
        let clock = HybridLogicalClock(origin: "a", wallClock: { Date(timeIntervalSince1970: 1_000) })
        let lastCounter = SyncTimestamp(wallTime: 2_000_000, counter: .max, origin: "z")
        clock.receive(lastCounter)
        let next = clock.now()
        #expect(next > lastCounter)
        #expect(next == SyncTimestamp(wallTime: 2_000_001, counter: 0, origin: "a"))

        for wallTime in [1_000_000 + 2 * 86_400_000, .max] as [Int64] {
            clock.receive(SyncTimestamp(wallTime: wallTime, counter: .max, origin: "z"))
            let first = clock.now()
            let second = clock.now()
            #expect(first.wallTime == 2_000_001, "not taken in: \(first)")
            #expect(second > first)
        }
        // A day ahead is within what clocks may disagree by: taken in.
        let aDayAhead = SyncTimestamp(wallTime: 1_000_000 + 86_400_000, counter: 5, origin: "z")
        clock.receive(aDayAhead)
        #expect(clock.now() > aDayAhead)
    }

    @Test func aClockBehindStampsAfterWhatItReceived() {
        let wall = ManualClock()
        let behind = HybridLogicalClock(origin: "b", wallClock: { wall.date.addingTimeInterval(-3600) })
        let ahead = HybridLogicalClock(origin: "a", wallClock: { wall.date })
        let remote = ahead.now()
        #expect(behind.now() < remote)  // before it saw the remote change
        behind.receive(remote)
        let local = behind.now()
        #expect(local > remote)
        #expect(local.wallTime == remote.wallTime)
        // An older timestamp received later does not move the clock back.
        behind.receive(SyncTimestamp(wallTime: 5, counter: 0, origin: "z"))
        #expect(behind.now() > local)
    }

    @Test func timestampsOrderByWallTimeThenCounterThenOrigin() {
        #expect(
            SyncTimestamp(wallTime: 1, counter: 9, origin: "z") < SyncTimestamp(wallTime: 2, counter: 0, origin: "a"))
        #expect(
            SyncTimestamp(wallTime: 2, counter: 0, origin: "z") < SyncTimestamp(wallTime: 2, counter: 1, origin: "a"))
        #expect(
            SyncTimestamp(wallTime: 2, counter: 1, origin: "A") < SyncTimestamp(wallTime: 2, counter: 1, origin: "a"))
    }

    @Test func timestampsRoundTripThroughTheirText() {
        let timestamp = SyncTimestamp(wallTime: 1_700_000_000_123, counter: 4, origin: "f00d-beef")
        #expect(SyncTimestamp(timestamp.description) == timestamp)
        for bad in ["", "1.2", "x.1.a", "1.-1.a", "1.y.a"] {
            #expect(SyncTimestamp(bad) == nil, "\(bad)")
        }
    }

    @Test func originsAreCleanedOfDots() {
        #expect(HybridLogicalClock(origin: "host.example.com").origin == "hostexamplecom")
    }
}
