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

#if canImport(Darwin)
/// Watches a directory for writes to one file name and calls back on each batch of them.
///
/// On Apple platforms, a dispatch source on the directory, which sees files renamed into place
/// and removed, but not files rewritten in place; ``FileSuite/reload()`` covers those.
final class FileWatcher: @unchecked Sendable {
    // `@unchecked`: `source` is set once in `init`; a dispatch source is safe to cancel from any thread.
    private let source: any DispatchSourceFileSystemObject

    /// Always `true`: the source keeps watching the directory it opened.
    var isWatching: Bool { true }

    init?(
        directory: String, fileName: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void,
        onGone: @escaping @Sendable () -> Void
    ) {
        let fd = open(directory, O_EVTONLY)
        guard fd >= 0 else { return nil }
        source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: fd, eventMask: [.write, .delete, .rename], queue: queue
        )
        source.setEventHandler(handler: onChange)
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    func stop() {
        source.cancel()
    }
}
#else
/// Watches a directory for writes to one file name and calls back on each batch of them.
///
/// inotify on the directory (a file replaced by `rename` is a new inode, so the file itself cannot
/// be watched), filtered to the file name: `IN_CLOSE_WRITE` for writers that rewrite in place
/// (Foundation), `IN_MOVED_TO` for those that rename (this library), and deletion.
///
/// Every watcher of the process shares one inotify instance and one thread
/// (``DirectoryEvents``): the kernel allows a user 128 inotify instances by default, across all of
/// their processes, so one instance per suite would silently stop watching after a few dozen
/// suites. Call-backs run on the serial queue the owner gives (one per suite, so that a slow
/// observer of one suite does not hold up the others, and the two watchers of a suite whose file
/// is a link never call back at once); events that arrive while a call-back is queued share it.
final class FileWatcher: Sendable {
    private let subscription: DirectoryEvents.Subscription

    /// Whether the directory is still watched: `false` once it was removed or moved.
    var isWatching: Bool { DirectoryEvents.shared?.isSubscribed(subscription) ?? false }

    /// Watches `fileName` in `directory`: `onChange` after writes to it, `onGone` once if the
    /// directory goes away, which ends this watcher.
    init?(
        directory: String, fileName: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void,
        onGone: @escaping @Sendable () -> Void
    ) {
        guard let events = DirectoryEvents.shared,
            let subscription = events.subscribe(
                directory: directory, fileName: fileName, queue: queue, onChange: onChange, onGone: onGone)
        else { return nil }
        self.subscription = subscription
    }

    func stop() {
        DirectoryEvents.shared?.unsubscribe(subscription)
    }
}

#endif
