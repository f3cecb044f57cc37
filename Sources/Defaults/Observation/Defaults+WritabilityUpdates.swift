import Synchronization

extension Defaults {
    /// The writability of `key` each time it changes (first at once, unless `initial` is
    /// `false`): when an administrator's managed file starts or stops enforcing it, in this
    /// process or another one (the administrator's directories are watched).
    ///
    /// ```swift
    /// for await writability in Defaults.writabilityUpdates(.fontSize) {
    ///     slider.isEnabled = writability.isWritable
    /// }
    /// ```
    ///
    /// Only the latest writability waits to be taken (a state, not a history), and an element is
    /// yielded only when it differs from the one before. The stream ends when the iterating task
    /// is cancelled.
    public static func writabilityUpdates(_ key: Keys, initial: Bool = true) -> AsyncStream<Writability> {
        let (stream, continuation) = AsyncStream.makeStream(of: Writability.self, bufferingPolicy: .bufferingNewest(1))
        let last = Mutex<Writability?>(nil)
        // Under `last`'s lock, so that two changes told on two threads cannot cross.
        let yieldIfChanged: @Sendable () -> Void = {
            last.withLock { last in
                let current = writability(of: key)
                guard current != last else { return }
                last = current
                continuation.yield(current)
            }
        }
        if !initial {
            last.withLock { $0 = writability(of: key) }
        }
        let center = key.suite.changes
        let token = center.addObserver(forKeys: [key.name]) { _ in yieldIfChanged() }
        continuation.onTermination = { _ in center.removeObserver(token) }
        // A change made before the observer was added is caught here.
        yieldIfChanged()
        return stream
    }
}
