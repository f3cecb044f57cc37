import DefaultsFiles
import DefaultsPropertyList
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension FileSuite {
    /// How long after opening a suite that nobody observes or writes it starts watching at its
    /// next read, so that a program that only reads sees other processes' changes from then on.
    package static let watchingDelay: Duration = .seconds(1)

    /// Arranges for watching to begin when it is first needed: at the first observer, at the
    /// first write, or at the first read ``watchingDelay`` or more after opening. A command-line
    /// program that reads a value and exits sooner starts no thread, no timer and no inotify
    /// instance (whose start and teardown would cost its exit a tenth of a millisecond or more).
    func watchWhenNeeded() {
        changes.whenFirstObserved { [weak self] in self?.watchFromNowOn() }
    }

    /// Called by every read: starts watching, off the reading thread, once the suite has been
    /// open for ``watchingDelay`` and nothing else started it. One relaxed load once watching.
    @inline(__always)
    func watchIfDue() {
        guard !hasBegunWatching.load(ordering: .relaxed) else { return }
        scheduleWatchingIfDue()
    }

    /// Until then, a read also reads the clock (tens of nanoseconds, in a program's first second).
    @inline(never)
    private func scheduleWatchingIfDue() {
        guard !isWatchingScheduled.load(ordering: .relaxed), ContinuousClock.now - openedAt >= Self.watchingDelay,
            !isWatchingScheduled.exchange(true, ordering: .relaxed)
        else { return }
        // Not on the reading thread: it may hold `io` (inside `modify`), which a reload takes.
        DispatchQueue.global(qos: .utility).async { [weak self] in self?.watchFromNowOn() }
    }

    /// Begins watching the file and the administrator's files, once, and reads what other
    /// processes changed since the suite was opened.
    func watchFromNowOn() {
        guard !hasBegunWatching.exchange(true, ordering: .acquiringAndReleasing) else { return }
        startWatchingAdministratorLayers()
        startWatching()
        // What the administrator changed before the watchers started would otherwise be seen
        // only at the file's next change.
        reloadAdministratorLayers()
        reload()
    }

    /// Starts watching the file's directory for other processes' writes, once the directory
    /// exists (it is created on first write otherwise, and watching starts then). For a suite file
    /// that is a link, the directory of the file it points to is watched too: writers replace that
    /// file, not the link. Watching starts again when a watched directory went away (removed or
    /// moved) and is back, or is made again by a write of this suite.
    ///
    /// - Parameter creatingDirectory: Whether to create the directory if it is missing.
    /// - Returns: Whether every watcher is watching.
    @discardableResult
    func startWatching(creatingDirectory: Bool = true) -> Bool {
        watchers.withLock { watchers in
            if !watchers.isEmpty, watchers.allSatisfy(\.isWatching) { return true }
            for watcher in watchers { watcher.stop() }
            watchers = []
            if creatingDirectory {
                // Foundation creates the directory on its first write; creating it now lets the
                // watcher see that write. Failing here is fine: the first write reports why.
                try? PosixFile.makeDirectory(file.directory)
            }
            var watched = [(file.directory, file.fileName)]
            if let target = try? AtomicFileWrite.target(of: file.path), target != file.path {
                watched.append(((target as NSString).deletingLastPathComponent, (target as NSString).lastPathComponent))
            }
            for (directory, name) in watched {
                let watcher = FileWatcher(
                    directory: directory, fileName: name, queue: watcherQueue,
                    onChange: { [weak self] in self?.reload() },
                    onGone: { [weak self] in self?.resumeWatching() })
                watchers += watcher.map { [$0] } ?? []
            }
            return watchers.count == watched.count
        }
    }

    /// A watched directory went away: once a second, until it is back (made again by another
    /// process, or by a write of this suite), watch it again and read what was written meanwhile.
    /// Stops when the suite is released.
    private func resumeWatching() {
        // One attempt at a time, however many watchers ended.
        guard !isResumingWatching.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 1) { [weak self] in
            guard let self else { return }
            self.isResumingWatching.store(false, ordering: .releasing)
            if self.startWatching(creatingDirectory: false) {
                self.reload()
            } else {
                self.resumeWatching()
            }
        }
    }

    /// Whether every watcher of the suite's file is watching (`false` after its directory went
    /// away, until it is back).
    package var isWatching: Bool {
        watchers.withLock { !$0.isEmpty && $0.allSatisfy(\.isWatching) }
    }

    /// Reads the file again if another process changed it, and posts the keys whose values changed.
    ///
    /// The file watcher calls this by itself; call it where no watcher can run (a file system
    /// without change notifications, such as some network file systems). When it returns, what it
    /// found wrong with the file (or what a reload of the watcher's running meanwhile found) is in
    /// ``problems``.
    public func reload() {
        // Inside `modify` on this thread, which has just read the file holding its locks.
        guard !isSynchronizingOnThisThread else { return }
        // Our own writes come back as events too; they leave the file as we recorded it. Checked
        // first without `io`, so that the event of a flush's rename does not hold up the next flush
        // (a write that lands after this check has an event of its own).
        if isFileAsLoaded() { return }
        store.holdingLocks { held in reloadHoldingIO(into: &held) }
    }

    /// The part of ``reload()`` that holds `io`: what it changed is kept in `held`; the problems
    /// it found are recorded before `io` is released and told once it is.
    private func reloadHoldingIO(into held: inout HeldEdits) {
        var problems: [DefaultsError] = []
        io.withLock { io in
            let loadedIdentity = fileState.withLock { $0.loadedIdentity }
            if isFileAsLoaded() { return }
            var found: [DefaultsError] = []
            let values: [String: PropertyListValue]
            let identity: FileIdentity?
            switch readFile(holdingLock: false, problems: &found) {
            case .values(let read, let readIdentity):
                io.reportedBlockage = nil
                (values, identity) = (read, readIdentity)
            case .absent:
                io.reportedBlockage = nil
                (values, identity) = ([:], nil)
            case .blocked(let blockingIdentity, _):
                // Reported once per version of what is in the way, not at every event.
                if blockingIdentity == nil || io.reportedBlockage != blockingIdentity {
                    io.reportedBlockage = blockingIdentity
                    problems += found
                    record(found)
                }
                return
            }
            problems += found
            adopt(values, identity: identity, loadedIdentity: loadedIdentity, into: &held)
            record(problems)
        }
        // Announced outside the locks, before the changes are posted: handlers may flush or reload.
        for problem in problems {
            announce(problem)
        }
    }
}
