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
        // Our own writes come back as events too; they leave the file as we recorded it. Checked
        // first without `io`, so that the event of a flush's rename does not hold up the next flush
        // (a write that lands after this check has an event of its own).
        if isFileAsLoaded() { return }
        var problems: [DefaultsError] = []
        let changedKeys = io.withLock { io -> Set<String> in
            let loadedIdentity = state.withLock { $0.loadedIdentity }
            if isFileAsLoaded() { return [] }
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
