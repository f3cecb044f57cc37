import Synchronization

/// The keys declared with `iCloud: true`: a key only says here that it is synced. The
/// application's sync engine (`SyncEngine.shared`) takes the keys declared so far when it is made
/// and is then handed each new one (``take(from:)``); a key never calls into sync.
enum SyncedKeyDeclarations {
    private struct State {
        /// Declared before the engine started, for it to take.
        var waiting: [Defaults.Keys] = []
        /// The engine's intake, once it has started.
        var taker: (@Sendable (Defaults.Keys) -> Void)?
        var hasNotedNothingSyncs = false
    }

    private static let state = Mutex(State())

    /// Records a key declared with `iCloud: true`.
    static func declare(_ key: Defaults.Keys) {
        let taker = state.withLock { state -> (@Sendable (Defaults.Keys) -> Void)? in
            if state.taker == nil {
                state.waiting.append(key)
            }
            return state.taker
        }
        if let taker {
            taker(key)
        } else {
            noteNothingSyncs()
        }
    }

    /// Logs, once per process, that synced keys are declared with no sync store to sync them
    /// through: at the first such key, or by the engine when it has no store yet.
    static func noteNothingSyncs() {
        let isFirst = state.withLock { state in
            defer { state.hasNotedNothingSyncs = true }
            return !state.hasNotedNothingSyncs
        }
        if isFirst {
            Defaults.logger.notice(
                "Defaults.iCloud has no sync store connected yet: until one is (Defaults.iCloud.use(_:)), iCloud keys are stored locally only and nothing syncs"
            )
        }
    }

    /// Returns the keys declared so far and hands every later one to `taker`, on the declaring
    /// thread; called once, by the application's sync engine as it is made.
    static func take(from taker: @escaping @Sendable (Defaults.Keys) -> Void) -> [Defaults.Keys] {
        state.withLock { state in
            state.taker = taker
            defer { state.waiting = [] }
            return state.waiting
        }
    }
}
