import DefaultsPropertyList
import Foundation
import Testing

@testable import Defaults
@testable import DefaultsSync

/// The sync engine's rules, run in process by `EngineDriver`: an engine of the test's own, its
/// time moved by the test, each step run to its end. The cross-process tests
/// (DefaultsSyncTestingTests, DefaultsPostgresTests) show the same engine as the application's.
@Suite struct EngineInProcessTests {
    let suite = Self.makeSuite()

    static func makeSuite() -> FileSuite {
        FileSuite(name: "engine-\(UUID().uuidString)", directory: TemporarySuites.makeDirectory(), arguments: [])
    }
    var startTime: Int64 { 1_800_000_000_000 }

    func key(_ name: String = "volume") -> Defaults.Key<Int> {
        Defaults.Key<Int>(name, default: 0, suite: suite)
    }

    /// An engine of its own, connected to its store, syncing `keys`.
    func connected(syncing keys: Defaults.Keys...) async -> EngineDriver {
        let driver = EngineDriver(origin: "here")
        await driver.sync(keys)
        await driver.connect()
        return driver
    }

    func stamp(_ wallTime: Int64, counter: Int64 = 0, origin: String = "other") -> SyncTimestamp {
        SyncTimestamp(wallTime: wallTime, counter: counter, origin: origin)
    }

    @Test func aLocalChangeIsPushedStampedByTheEnginesClock() async throws {
        let volume = key()
        let driver = await connected(syncing: volume)

        Defaults[volume] = 7
        await driver.runUntilQuiet()

        let record = try #require(driver.store.record(forKey: "volume"))
        #expect(try record.decodedValue == .integer(7))
        #expect(record.timestamp == stamp(startTime, origin: "here"))
        let status = driver.status
        #expect(status.pendingChanges == 0)
        #expect(status.isConnected)
        #expect(status.lastSync == driver.now)
    }

    @Test func aFormerNameDeclaredAfterTheKeyWasAddedIsReadIntoItWhenAStoreIsUsed() async throws {
        let driver = EngineDriver(origin: "here", usingStoreNow: false)
        await driver.sync(key())
        // Declared again, with the name the previous version stored it under, before `use`.
        let volume = Defaults.Key<Int>("volume", default: 0, suite: suite, migrating: .renamed(from: "oldVolume"))
        await driver.useStore()
        await driver.connect()

        await driver.deliver(try .of("oldVolume", .integer(4), at: stamp(startTime + 1_000)))
        #expect(Defaults[volume] == 4)
    }

    @Test func aLaterRemoteValueIsAppliedAndAnEarlierOneIsNot() async throws {
        let volume = key()
        let driver = await connected(syncing: volume)
        Defaults[volume] = 1
        await driver.runUntilQuiet()

        await driver.deliver(try .of("volume", .integer(2), at: stamp(startTime + 1_000)))
        #expect(Defaults[volume] == 2)

        await driver.deliver(try .of("volume", .integer(3), at: stamp(startTime - 1_000)))
        #expect(Defaults[volume] == 2, "an earlier version never replaces a later one")

        // The clock took in the later stamp: the next local change is after it, though the
        // driver's time has not moved.
        Defaults[volume] = 4
        await driver.runUntilQuiet()
        let record = try #require(driver.store.record(forKey: "volume"))
        #expect(try record.decodedValue == .integer(4))
        #expect(record.timestamp > stamp(startTime + 1_000))
        #expect(record.timestamp.origin == "here")
    }

    @Test func aRemoteVersionMoreThanADayAheadIsKeptAsideAndNotTakenIn() async throws {
        let volume = key()
        let driver = await connected(syncing: volume)
        Defaults[volume] = 1
        await driver.runUntilQuiet()

        let twoDays: Int64 = 2 * 86_400_000
        await driver.deliver(try .of("volume", .integer(99), at: stamp(startTime + twoDays)))
        #expect(Defaults[volume] == 1)
        #expect(driver.status.keptAsideKeys == ["volume"])

        await driver.advance(by: .seconds(5))
        Defaults[volume] = 2
        await driver.runUntilQuiet()
        let pushed = try #require(driver.store.pushed.last)
        #expect(pushed.timestamp.wallTime == startTime + 5_000, "the clock did not move to the far stamp")
    }

    @Test func aFailedPushIsRetriedOnceItsPauseHasPassedAndNotBefore() async throws {
        let volume = key()
        let driver = await connected(syncing: volume)

        driver.store.failNextPush(with: DriverError("the database is restarting"))
        Defaults[volume] = 5
        await driver.runUntilQuiet()
        #expect(driver.store.record(forKey: "volume") == nil)
        #expect(driver.status.pendingChanges == 1)
        #expect(driver.status.lastError == "the database is restarting")
        #expect(driver.scheduledCount == 1, "one retry scheduled")

        await driver.advance(by: .milliseconds(999))
        #expect(driver.store.record(forKey: "volume") == nil, "not retried before its pause")

        await driver.advance(by: .milliseconds(1))
        #expect(try driver.store.record(forKey: "volume")?.decodedValue == .integer(5))
        #expect(driver.status.pendingChanges == 0)
        #expect(driver.status.lastError == nil, "the failure is over")
    }

    @Test func aRetryAfterTheConnectionIsLostWaitsForTheNextConnection() async throws {
        let volume = key()
        let driver = await connected(syncing: volume)
        driver.store.failNextPush(with: DriverError("reset by peer"))
        Defaults[volume] = 5
        await driver.runUntilQuiet()
        await driver.disconnect()

        await driver.advance(by: .seconds(2))
        #expect(driver.store.record(forKey: "volume") == nil, "no retry while disconnected")
        #expect(driver.status.isConnected == false)
        #expect(driver.status.pendingChanges == 1)

        await driver.connect()
        #expect(try driver.store.record(forKey: "volume")?.decodedValue == .integer(5))
        #expect(driver.status.pendingChanges == 0)
    }

    @Test func aRefusedKeyIsSetAsideWhileOthersSyncAndTriedAgainWhenItChanges() async throws {
        let (volume, theme) = (key(), key("theme"))
        let driver = await connected(syncing: volume, theme)
        driver.store.refuse("volume", reason: "over the limit")

        Defaults[volume] = 1
        Defaults[theme] = 2
        await driver.runUntilQuiet()
        let status = driver.status
        #expect(status.refusedKeys == ["volume"])
        #expect(status.pendingChanges == 0, "a refused change is set aside, not pending")
        #expect(status.lastError?.contains("over the limit") == true)
        #expect(try driver.store.record(forKey: "theme")?.decodedValue == .integer(2))
        #expect(Defaults[volume] == 1, "kept locally")

        driver.store.accept("volume")
        Defaults[volume] = 3
        await driver.runUntilQuiet()
        #expect(try driver.store.record(forKey: "volume")?.decodedValue == .integer(3))
        #expect(driver.status.refusedKeys.isEmpty)
        #expect(driver.status.lastError == nil)
    }

    /// The status shows one problem, the latest still standing: a lost connection over refused
    /// keys, the refusal again once reconnected (it stands until the keys are pushed), then none.
    @Test func theStatusShowsTheLatestProblemStillStanding() async throws {
        let volume = key()
        let driver = await connected(syncing: volume)
        driver.store.refuse("volume", reason: "over the limit")
        Defaults[volume] = 1
        await driver.runUntilQuiet()
        let refusal = try #require(driver.status.lastError)
        #expect(refusal.contains("over the limit"))

        await driver.disconnect("the network is down")
        #expect(driver.status.lastError == "the network is down")

        driver.store.failNextPush(with: DriverError("the database is restarting"))
        driver.store.accept("volume")
        Defaults[volume] = 2
        await driver.connect()
        #expect(driver.status.lastError == "the database is restarting")

        await driver.advance(by: .seconds(1))
        #expect(driver.status.lastError == nil, "the push went through: the failure and refusal are over")
        #expect(try driver.store.record(forKey: "volume")?.decodedValue == .integer(2))
    }

    /// An application's observer of one synced key writes another, for a local change and for a
    /// remote one the engine applied: both keys' values reach the store.
    @Test func anObserverThatWritesAnotherSyncedKeyHasItPushed() async throws {
        let (volume, doubled) = (key(), key("doubled"))
        let driver = await connected(syncing: volume, doubled)
        let observation = Defaults.observe(volume, options: []) { change in
            Defaults[doubled] = change.newValue * 2
        }
        defer { observation.invalidate() }

        Defaults[volume] = 21
        await driver.runUntilQuiet()
        #expect(try driver.store.record(forKey: "volume")?.decodedValue == .integer(21))
        #expect(try driver.store.record(forKey: "doubled")?.decodedValue == .integer(42))

        await driver.deliver(try .of("volume", .integer(5), at: stamp(startTime + 1_000)))
        #expect(Defaults[volume] == 5)
        #expect(Defaults[doubled] == 10)
        await driver.runUntilQuiet()
        #expect(try driver.store.record(forKey: "doubled")?.decodedValue == .integer(10))
        #expect(driver.store.record(forKey: "volume")?.timestamp == stamp(startTime + 1_000), "not pushed back")
    }

    @Test func changesMadeOfflineArePushedAtTheFirstConnection() async throws {
        let driver = EngineDriver(origin: "here")
        let volume = key()
        await driver.sync(volume)
        Defaults[volume] = 8
        await driver.runUntilQuiet()
        #expect(driver.store.pushed.isEmpty)
        #expect(driver.status.pendingChanges == 1)

        await driver.connect()
        #expect(try driver.store.record(forKey: "volume")?.decodedValue == .integer(8))
        #expect(driver.status.pendingChanges == 0)
    }

    @Test func theFirstConnectionTakesInWhatTheStoreHoldsNewer() async throws {
        let driver = EngineDriver(origin: "here")
        let volume = key()
        driver.store.hold(try .of("volume", .integer(11), at: stamp(startTime - 60_000)))
        await driver.sync(volume)
        await driver.connect()
        #expect(Defaults[volume] == 11)
        #expect(driver.store.pushed.isEmpty, "nothing local to push")
    }

    /// Two engines in one process, each with its suite and store: what one pushes, delivered to
    /// the other, converges both on the later version, whichever arrives first.
    @Test func twoEnginesConvergeOnTheLaterChange() async throws {
        let other = Self.makeSuite()
        let (first, second) = (EngineDriver(origin: "a"), EngineDriver(origin: "b"))
        let (volumeA, volumeB) = (key(), Defaults.Key<Int>("volume", default: 0, suite: other))
        await first.sync(volumeA)
        await second.sync(volumeB)
        await first.connect()
        await second.connect()

        Defaults[volumeA] = 1
        await first.runUntilQuiet()
        await second.advance(by: .milliseconds(10))
        Defaults[volumeB] = 2
        await second.runUntilQuiet()

        let fromA = try #require(first.store.record(forKey: "volume"))
        let fromB = try #require(second.store.record(forKey: "volume"))
        await first.deliver(fromB)
        await second.deliver(fromA)
        #expect(Defaults[volumeA] == 2)
        #expect(Defaults[volumeB] == 2)
    }

    /// A change made offline by one run of a program is pushed by the next run's engine at its
    /// connection, though that run declared no key yet: it binds the program's suites whose
    /// journals hold unpushed changes.
    @Test func theNextRunPushesWhatTheLastLeftUnpushed() async throws {
        let directory = TemporarySuites.makeDirectory()
        let suite = FileSuite(name: "engine-\(UUID().uuidString)", directory: directory, arguments: [])
        let volume = Defaults.Key<Int>("volume", default: 0, suite: suite)
        var offline: EngineDriver? = EngineDriver(origin: "first-run")
        await offline?.sync(volume)
        Defaults[volume] = 4
        await offline?.runUntilQuiet()
        try suite.flush()  // the journal is made durable before the suite's file
        #expect(offline?.store.pushed.isEmpty == true)
        offline = nil

        let next = EngineDriver(origin: "next-run", programDirectory: directory)
        #expect(next.engine.keys.isEmpty)
        await next.connect()
        #expect(try next.store.record(forKey: "volume")?.decodedValue == .integer(4))
        #expect(next.status.pendingChanges == 0)
    }

    @Test func aShutDownEngineStopsObservingItsSuite() async throws {
        var driver: EngineDriver? = EngineDriver(origin: "here")
        let volume = key()
        await driver?.sync(volume)
        await driver?.connect()
        #expect(suite.changes.observerCount == 1, "the engine observes the suite")
        driver = nil
        #expect(suite.changes.observerCount == 0)
        Defaults[volume] = 3
        #expect(Defaults[volume] == 3)
    }

    /// A push that keeps failing is retried once a second, each retry at its own time.
    @Test func aPushThatKeepsFailingIsRetriedEverySecond() async throws {
        let volume = key()
        let driver = await connected(syncing: volume)
        for attempt in 1...4 {
            driver.store.failNextPush(with: DriverError("attempt \(attempt) failed"))
        }
        Defaults[volume] = 5
        await driver.runUntilQuiet()
        await driver.advance(by: .seconds(10))
        #expect(driver.store.pushed.count == 5, "the first push and four retries, the last stored")
        #expect(try driver.store.record(forKey: "volume")?.decodedValue == .integer(5))
        #expect(driver.status.lastSync == Date(timeIntervalSince1970: 1_800_000_004), "stored at the fourth retry")
        #expect(driver.now == Date(timeIntervalSince1970: 1_800_000_010))
    }
}
