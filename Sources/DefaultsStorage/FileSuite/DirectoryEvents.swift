import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if !canImport(Darwin)
/// The process's one inotify instance, its watches, and the thread that reads its events.
final class DirectoryEvents: Sendable {
    /// `nil` when the process cannot have an inotify instance (the user's limit is reached).
    static let shared = DirectoryEvents()

    struct Subscription: Sendable {
        let watch: Int32
        let id: UInt64
    }

    /// One subscriber's file name and its call-backs, run on its serial queue, the change call-back
    /// queued at most once at a time.
    private final class Listener: Sendable {
        let fileName: [UInt8]
        let queue: DispatchQueue
        let onChange: @Sendable () -> Void
        let onGone: @Sendable () -> Void
        let isQueued = Atomic(false)

        init(
            fileName: [UInt8], queue: DispatchQueue, onChange: @escaping @Sendable () -> Void,
            onGone: @escaping @Sendable () -> Void
        ) {
            self.fileName = fileName
            self.queue = queue
            self.onChange = onChange
            self.onGone = onGone
        }

        func deliverGone() {
            queue.async { self.onGone() }
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

    /// Calls `onChange` on `queue` after events naming `fileName` in `directory`, and `onGone` once
    /// if the directory goes away (removed or moved: its watch ends, and a directory made again at
    /// its path is a new one, to subscribe to again).
    func subscribe(
        directory: String, fileName: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void,
        onGone: @escaping @Sendable () -> Void
    ) -> Subscription? {
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_MOVE_SELF)
        let listener = Listener(fileName: Array(fileName.utf8), queue: queue, onChange: onChange, onGone: onGone)
        return state.withLock { state in
            // The same directory gives the same watch: adding it again under the lock is harmless.
            let watch = inotify_add_watch(inotifyFD, directory, mask)
            guard watch >= 0 else { return nil }
            state.nextID += 1
            state.listeners[watch, default: [:]][state.nextID] = listener
            return Subscription(watch: watch, id: state.nextID)
        }
    }

    /// Whether `subscription`'s directory is still watched.
    func isSubscribed(_ subscription: Subscription) -> Bool {
        state.withLock { $0.listeners[subscription.watch]?[subscription.id] != nil }
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
            var moved: [Int32] = []
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
                    // Moved: the watch follows the directory, no longer at the suite's path.
                    if mask & UInt32(IN_MOVE_SELF) != 0 { moved.append(watch) }
                    if length > 0, nameStart + length <= count {
                        named.append((watch, ArraySlice(bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 })))
                    }
                    offset = nameStart + length
                }
            }
            for watch in moved {
                inotify_rm_watch(inotifyFD, watch)  // its IN_IGNORED follows, and ends it
            }
            let (due, ended) = state.withLock { state -> ([Listener], [Listener]) in
                var due: [ObjectIdentifier: Listener] = [:]
                if isOverflow {
                    // Events were lost: every listener reads its file again.
                    for listener in state.listeners.values.flatMap(\.values) {
                        due[ObjectIdentifier(listener)] = listener
                    }
                }
                for (watch, name) in named {
                    guard let listeners = state.listeners[watch] else { continue }
                    for listener in listeners.values where listener.fileName.elementsEqual(name) {
                        due[ObjectIdentifier(listener)] = listener
                    }
                }
                var ended: [Listener] = []
                for watch in gone {
                    if let listeners = state.listeners.removeValue(forKey: watch) { ended += listeners.values }
                }
                return (Array(due.values), ended)
            }
            for listener in due {
                listener.deliver()
            }
            for listener in ended {
                listener.deliverGone()
            }
        }
    }
}
#endif
