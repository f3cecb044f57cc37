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

    init?(directory: String, fileName: String, onChange: @escaping @Sendable () -> Void) {
        let fd = open(directory, O_EVTONLY)
        guard fd >= 0 else { return nil }
        source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: fd, eventMask: [.write, .delete, .rename], queue: .global(qos: .utility)
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
/// suites. Call-backs run on a serial queue of the watcher's own, so that a slow observer of one
/// suite does not hold up the others; events that arrive while a call-back is queued share it.
final class FileWatcher: Sendable {
    private let subscription: DirectoryEvents.Subscription

    init?(directory: String, fileName: String, onChange: @escaping @Sendable () -> Void) {
        guard let events = DirectoryEvents.shared,
            let subscription = events.subscribe(directory: directory, fileName: fileName, onChange: onChange)
        else { return nil }
        self.subscription = subscription
    }

    func stop() {
        DirectoryEvents.shared?.unsubscribe(subscription)
    }
}

/// The process's one inotify instance, its watches, and the thread that reads its events.
final class DirectoryEvents: Sendable {
    /// `nil` when the process cannot have an inotify instance (the user's limit is reached).
    static let shared = DirectoryEvents()

    struct Subscription: Sendable {
        let watch: Int32
        let id: UInt64
    }

    /// One subscriber's file name and its call-back, queued at most once at a time.
    private final class Listener: Sendable {
        let fileName: [UInt8]
        let onChange: @Sendable () -> Void
        let queue = DispatchQueue(label: "swift-defaults file watcher")
        let isQueued = Atomic(false)

        init(fileName: [UInt8], onChange: @escaping @Sendable () -> Void) {
            self.fileName = fileName
            self.onChange = onChange
        }

        func deliver() {
            guard !isQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
            queue.async {
                // Cleared before the call-back reads the file: an event from now on queues another.
                self.isQueued.store(false, ordering: .releasing)
                self.onChange()
            }
        }
    }

    private struct State {
        var listeners: [Int32: [UInt64: Listener]] = [:]
        var nextID: UInt64 = 0
    }

    private let inotifyFD: Int32
    private let state = Mutex(State())

    private init?() {
        inotifyFD = inotify_init1(Int32(IN_CLOEXEC))
        guard inotifyFD >= 0 else { return nil }
        let thread = Thread { [self] in readEvents() }
        thread.name = "swift-defaults file watcher"
        thread.start()
    }

    func subscribe(
        directory: String, fileName: String, onChange: @escaping @Sendable () -> Void
    ) -> Subscription? {
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
        let listener = Listener(fileName: Array(fileName.utf8), onChange: onChange)
        return state.withLock { state in
            // The same directory gives the same watch: adding it again under the lock is harmless.
            let watch = inotify_add_watch(inotifyFD, directory, mask)
            guard watch >= 0 else { return nil }
            state.nextID += 1
            state.listeners[watch, default: [:]][state.nextID] = listener
            return Subscription(watch: watch, id: state.nextID)
        }
    }

    func unsubscribe(_ subscription: Subscription) {
        state.withLock { state in
            guard state.listeners[subscription.watch]?.removeValue(forKey: subscription.id) != nil else { return }
            if state.listeners[subscription.watch]?.isEmpty == true {
                state.listeners[subscription.watch] = nil
                inotify_rm_watch(inotifyFD, subscription.watch)
            }
        }
    }

    /// Reads events for as long as the process lives and hands each batch to the listeners whose
    /// file it names.
    private func readEvents() {
        // Room for several events at once (each a 16-byte header and a padded name, at most 272
        // bytes); one page, as it stays resident for the life of the process.
        var buffer = [UInt8](repeating: 0, count: 4 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotifyFD, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            var named: [(watch: Int32, name: ArraySlice<UInt8>)] = []
            var gone: [Int32] = []
            var isOverflow = false
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + 16 <= count {
                    let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameStart = offset + 16
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { isOverflow = true }
                    // The directory went away (or the watch was removed): nothing more comes from it.
                    if mask & UInt32(IN_IGNORED) != 0 { gone.append(watch) }
                    if length > 0, nameStart + length <= count {
                        named.append((watch, ArraySlice(bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 })))
                    }
                    offset = nameStart + length
                }
            }
            let due = state.withLock { state -> [Listener] in
                var due: [ObjectIdentifier: Listener] = [:]
                if isOverflow {
                    // Events were lost: every listener reads its file again.
                    for listener in state.listeners.values.flatMap(\.values) {
                        due[ObjectIdentifier(listener)] = listener
                    }
                }
                for (watch, name) in named {
                    for listener in state.listeners[watch]?.values ?? [:].values
                    where listener.fileName.elementsEqual(name) {
                        due[ObjectIdentifier(listener)] = listener
                    }
                }
                for watch in gone {
                    state.listeners[watch] = nil
                }
                return Array(due.values)
            }
            for listener in due {
                listener.deliver()
            }
        }
    }
}
#endif
