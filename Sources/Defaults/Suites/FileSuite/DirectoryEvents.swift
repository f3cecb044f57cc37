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
                    guard let listeners = state.listeners[watch] else { continue }
                    for listener in listeners.values where listener.fileName.elementsEqual(name) {
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
