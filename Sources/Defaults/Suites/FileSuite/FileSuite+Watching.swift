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
    /// Starts watching the file's directory for other processes' writes, once the directory
    /// exists (it is created on first write otherwise, and watching starts then). For a suite file
    /// that is a link, the directory of the file it points to is watched too: writers replace that
    /// file, not the link.
    func startWatching() {
        watchers.withLock { watchers in
            guard watchers.isEmpty else { return }
            // Foundation creates the directory on its first write; creating it now lets the watcher
            // see that write. Failing here is fine: the first write of this suite reports why.
            try? PosixFile.makeDirectory(file.directory)
            var watched = [(file.directory, file.fileName)]
            if let target = try? AtomicFileWrite.target(of: file.path), target != file.path {
                watched.append(((target as NSString).deletingLastPathComponent, (target as NSString).lastPathComponent))
            }
            for (directory, name) in watched {
                let watcher = FileWatcher(directory: directory, fileName: name) { [weak self] in
                    self?.reloadIfChanged()
                }
                watchers += watcher.map { [$0] } ?? []
            }
        }
    }

    /// Reads the file again if another process changed it, and posts the keys whose values changed.
    ///
    /// The file watcher calls this by itself; call it where no watcher can run (a file system
    /// without change notifications, such as some network file systems).
    public func reload() {
        reloadIfChanged()
    }

    func reloadIfChanged() {
        // Inside `modify` on this thread, which has just read the file holding its locks.
        guard !isSynchronizingOnThisThread else { return }
        var problems: [DefaultsError] = []
        let changedKeys = io.withLock { io -> Set<String> in
            let loadedIdentity = state.withLock { $0.loadedIdentity }
            // Our own writes come back as events too; they leave the file as we recorded it.
            if let identity = try? PosixFile.identity(at: file.path), identity == loadedIdentity {
                return []
            }
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
                }
                return []
            }
            problems += found
            return adopt(values, identity: identity, loadedIdentity: loadedIdentity)
        }
        // Reported and posted outside the locks: handlers and observers may flush or reload.
        for problem in problems {
            report(problem)
        }
        changes.post(SuiteChange(keys: changedKeys, origin: .otherProcess))
    }
}

/// Watches a directory for writes to one file name and calls back on each batch of them.
///
/// On Linux, inotify on the directory (a file replaced by `rename` is a new inode, so the file
/// itself cannot be watched), filtered to the file name: `IN_CLOSE_WRITE` for writers that rewrite
/// in place (Foundation), `IN_MOVED_TO` for those that rename (this library), and deletion. The
/// events are read by a thread that ends when the watcher is stopped.
///
/// On Apple platforms, a dispatch source on the directory, which sees files renamed into place
/// and removed, but not files rewritten in place; ``FileSuite/reload()`` covers those.
final class FileWatcher: @unchecked Sendable {
    // `@unchecked`: the stored properties are set once in `init` and never change; on Linux the
    // mutable state is behind a Mutex, on Apple platforms a dispatch source is safe to cancel from
    // any thread.

    #if canImport(Darwin)
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
    #else
    /// The write end of the pipe that wakes the thread to stop, and whether the thread is gone.
    /// Under one lock, so that `stop()` never writes to a pipe whose reader has closed (which would
    /// raise SIGPIPE) and never closes a descriptor twice.
    private struct Control {
        var stopFD: Int32
        var isThreadFinished = false
        var isStopped = false
    }

    private final class SharedControl: Sendable {
        let control: Mutex<Control>
        init(stopFD: Int32) { control = Mutex(Control(stopFD: stopFD)) }
    }

    private let shared: SharedControl

    init?(directory: String, fileName: String, onChange: @escaping @Sendable () -> Void) {
        let inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotifyFD >= 0 else { return nil }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
        var pipeFDs: [Int32] = [-1, -1]
        guard inotify_add_watch(inotifyFD, directory, mask) >= 0, pipe(&pipeFDs) == 0 else {
            close(inotifyFD)
            return nil
        }
        for fd in pipeFDs {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        let shared = SharedControl(stopFD: pipeFDs[1])
        self.shared = shared
        let stopReadFD = pipeFDs[0]
        let name = Array(fileName.utf8)
        let thread = Thread {
            Self.run(inotifyFD: inotifyFD, stopFD: stopReadFD, fileName: name, onChange: onChange)
            shared.control.withLock { control in
                control.isThreadFinished = true
                close(inotifyFD)
                close(stopReadFD)
            }
        }
        thread.name = "swift-defaults file watcher"
        thread.start()
    }

    func stop() {
        shared.control.withLock { control in
            guard !control.isStopped else { return }
            control.isStopped = true
            if !control.isThreadFinished {
                var byte: UInt8 = 1
                _ = write(control.stopFD, &byte, 1)
            }
            close(control.stopFD)
        }
    }

    /// Reads events until told to stop or the directory goes away; the caller closes the descriptors.
    private static func run(inotifyFD: Int32, stopFD: Int32, fileName: [UInt8], onChange: @Sendable () -> Void) {
        // Room for several events at once (each a 16-byte header and a padded name, at most 272
        // bytes); one page, as it stays resident for as long as the suite is watched.
        var buffer = [UInt8](repeating: 0, count: 4 * 1024)
        var pollFDs = [
            pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            pollFDs[0].revents = 0
            pollFDs[1].revents = 0
            if poll(&pollFDs, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if pollFDs[1].revents != 0 { return }
            var isRelevant = false
            var isWatchGone = false
            while true {
                let count = buffer.withUnsafeMutableBytes { read(inotifyFD, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                buffer.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset + 16 <= count {
                        let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                        let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        let nameStart = offset + 16
                        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                            isRelevant = true
                        }
                        if mask & UInt32(IN_IGNORED) != 0 {
                            isWatchGone = true
                        }
                        if length > 0, nameStart + length <= count {
                            let name = bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 }
                            if name.elementsEqual(fileName) {
                                isRelevant = true
                            }
                        }
                        offset = nameStart + length
                    }
                }
            }
            if isRelevant {
                onChange()
            }
            // The directory was removed: nothing more will come from this watch.
            if isWatchGone { return }
        }
    }
    #endif
}
