@_spi(Testing) import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

/// The kernel allows a user 128 inotify instances (`fs.inotify.max_user_instances`), across all of
/// their processes. Suites share one, so a process may watch any number of suites.
@Suite("many watched suites", .mayBlock)
struct ManyWatchedSuitesTests {
    static let inotifyInstanceLimit: Int? =
        (try? String(
            contentsOfFile: "/proc/sys/fs/inotify/max_user_instances", encoding: .utf8))
        .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }

    @Test(
        .enabled(if: inotifyInstanceLimit != nil, "needs Linux's inotify limits in /proc"),
        .timeLimit(.minutes(5))
    )
    func moreSuitesThanTheUsersInotifyLimitEachSeeOtherWriters() async throws {
        let count = (Self.inotifyInstanceLimit ?? 128) + 72
        let directory = try FileSuiteTemporaryDirectory()
        let readers = (0..<count).map { directory.suite("suite-\($0)") }
        let changed = Mutex(Set<Int>())
        let tokens = readers.enumerated().map { index, reader in
            reader.changes.addObserver { _ in _ = changed.withLock { $0.insert(index) } }
        }
        defer {
            for (reader, token) in zip(readers, tokens) { reader.changes.removeObserver(token) }
        }
        // Another suite object of each name writes, as another process would: the readers learn of
        // it only from their watchers.
        for index in 0..<count {
            let writer = directory.suite("suite-\(index)")
            writer.set(index, forKey: "value")
            try writer.flush()
        }
        try await waitUntil("every suite to see its writer's value") {
            readers.indices.allSatisfy { readers[$0].object(forKey: "value") as? Int == $0 }
        }
        // Observers are told after the value is in place, on the watcher's queue: a suite may show
        // the value a moment before its observers hear of it (CI saw 199 of 200 told at once).
        try await waitUntil("every suite's observers to be told") {
            changed.withLock { $0.count } == count
        }
    }
}
