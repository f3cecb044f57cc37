import Foundation
import Synchronization

@testable import Defaults
@testable import DefaultsSync

/// Runs a `SyncEngine` in process, deterministically, as NIO's `EmbeddedChannel` runs a channel:
/// the engine's wall clock and its retries go by the driver's time, which moves only when the test
/// advances it, and every step returns once the engine has run all it queued. An engine of its own, beside the application's
/// (`Defaults.iCloud`): keys are given to it (`sync(_:)`), never by `iCloud: true`.
final class EngineDriver: Sendable {
    /// The driver's time: a date, and the work the engine scheduled for later.
    private final class Time: Sendable {
        struct State {
            var now: Date
            var scheduled: [(due: Date, work: @Sendable () -> Void)] = []
        }
        let state: Mutex<State>
        init(_ now: Date) { state = Mutex(State(now: now)) }
        func withLock<Result>(_ body: (inout State) -> Result) -> Result { state.withLock { body(&$0) } }
    }

    let engine: SyncEngine
    let store: EmbeddedSyncStore
    let clock: HybridLogicalClock
    private let time: Time

    /// An engine that syncs through `store`, with a clock named `origin` starting at `start`,
    /// and looking for unpushed journals in `programDirectory` when it connects; it uses the
    /// store from the start unless `usingStoreNow` is false (then ``useStore()`` does).
    init(
        origin: String, store: EmbeddedSyncStore = EmbeddedSyncStore(),
        start: Date = Date(timeIntervalSince1970: 1_800_000_000), programDirectory: URL? = nil,
        usingStoreNow: Bool = true
    ) {
        let time = Time(start)
        self.time = time
        self.store = store
        clock = HybridLogicalClock(origin: origin, wallClock: { time.withLock { $0.now } })
        engine = SyncEngine(
            programDirectory: { programDirectory },
            schedule: { delay, work in
                time.withLock { $0.scheduled.append((due: $0.now.addingTimeInterval(delay.seconds), work: work)) }
            })
        if usingStoreNow {
            engine.use(store, clock: clock)
        }
    }

    /// Starts using the store, as a program's `Defaults.iCloud.use(_:)` does.
    func useStore() async {
        engine.use(store, clock: clock)
        await runUntilQuiet()
    }

    deinit {
        engine.shutDown()
        time.withLock { $0.scheduled = [] }
    }

    /// The driver's time now.
    var now: Date { time.withLock { $0.now } }

    /// Syncs `keys` from now on, and runs what that queued.
    func sync(_ keys: Defaults.Keys...) async {
        await sync(keys)
    }

    /// Syncs `keys` from now on, and runs what that queued.
    func sync(_ keys: [Defaults.Keys]) async {
        for key in keys {
            engine.add(key)
        }
        await runUntilQuiet()
    }

    /// Reports the connection, and runs the catch-up and push it starts.
    func connect() async {
        await store.send(.connected)
        await runUntilQuiet()
    }

    /// Reports a lost connection.
    func disconnect(_ reason: String = "connection lost") async {
        await store.send(.disconnected(DriverError(reason)))
        await runUntilQuiet()
    }

    /// Delivers `records` as other machines' changes, which the store then holds, and runs
    /// their applying.
    func deliver(_ records: SyncRecord...) async {
        for record in records {
            store.hold(record)
        }
        await store.send(.received(records))
        await runUntilQuiet()
    }

    /// Moves the time forward, through each piece of work scheduled by then in the order due:
    /// the time moves to when it is due, it runs (a retry queues its job), and what it queued
    /// runs, as many times as the engine schedules again meanwhile.
    func advance(by duration: Duration) async {
        let end = time.withLock { $0.now.addingTimeInterval(duration.seconds) }
        while let work = nextWork(dueBy: end) {
            work()
            await runUntilQuiet()
        }
        time.withLock { $0.now = end }
    }

    /// Takes out the earliest work due by `end`, the time moved to when it is due.
    private func nextWork(dueBy end: Date) -> (@Sendable () -> Void)? {
        time.withLock { time in
            guard
                let index = time.scheduled.indices.filter({ time.scheduled[$0].due <= end })
                    .min(by: { time.scheduled[$0].due < time.scheduled[$1].due })
            else { return nil }
            let next = time.scheduled.remove(at: index)
            time.now = max(time.now, next.due)
            return next.work
        }
    }

    /// How many pieces of work the engine has scheduled for later (retries).
    var scheduledCount: Int { time.withLock { $0.scheduled.count } }

    /// Runs every job the engine has queued, and those they queue.
    func runUntilQuiet() async {
        await engine.waitUntilQuiet()
    }

    /// The engine's status.
    var status: SyncStatus { engine.status }
}

struct DriverError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
