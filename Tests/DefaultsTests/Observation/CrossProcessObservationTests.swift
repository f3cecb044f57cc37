@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

extension ObservationTests {
    /// Changes another process makes to a file-backed suite reach this process's observers.
    @Suite("other processes")
    struct CrossProcessObservationTests {
        @Test func updatesLoopReceivesAValueWrittenByAnotherProcess() async throws {
            let name = "swift-defaults-tests-\(UUID().uuidString)"
            let suite = FileSuite(name: name, directory: ObservationFiles.directory, arguments: [])
            let key = Defaults.Key<Int>("counter", default: 0, suite: suite)
            let recorder = ObservationRecorder<Int>()
            let task = recordUpdates(Defaults.updates(key), into: recorder)
            try await recorder.wait(count: 1)

            let result = try TestHelper.run([
                "observation-write", ObservationFiles.directory.path, name, "counter", "42",
            ])
            #expect(result.status == 0, "\(result.error)")
            try await recorder.wait(count: 2)
            #expect(recorder.values == [0, 42])

            task.cancel()
            await task.value
            #expect(suite.changes.observerCount == 0)
        }

        @Test func observeHandlerHearsAnotherProcess() async throws {
            let name = "swift-defaults-tests-\(UUID().uuidString)"
            let suite = FileSuite(name: name, directory: ObservationFiles.directory, arguments: [])
            let key = Defaults.Key<Int>("volume", default: 1, suite: suite)
            Defaults[key] = 2
            try suite.flush()
            let recorder = ObservationRecorder<String>()
            let observation = Defaults.observe(key, options: []) { change in
                recorder.append("\(change.oldValue)→\(change.newValue)")
            }
            defer { observation.invalidate() }

            let result = try TestHelper.run([
                "observation-write", ObservationFiles.directory.path, name, "volume", "9",
            ])
            #expect(result.status == 0, "\(result.error)")
            try await recorder.wait(count: 1)
            #expect(recorder.values == ["2→9"])
            #expect(Defaults[key] == 9)
        }

        /// The suite's directory is removed while it is watched (a user resetting the app), then
        /// another process makes it again and writes: the change still reaches the observer.
        @Test func watchingGoesOnWhenTheDirectoryIsRemovedAndMadeAgain() async throws {
            let name = "swift-defaults-tests-\(UUID().uuidString)"
            let directory = ObservationFiles.directory.appendingPathComponent(name, isDirectory: true)
            let suite = FileSuite(name: name, directory: directory, arguments: [])
            let key = Defaults.Key<Int>("volume", default: 1, suite: suite)
            let recorder = ObservationRecorder<Int>()
            let observation = Defaults.observe(key, options: []) { change in recorder.append(change.newValue) }
            defer { observation.invalidate() }
            #expect(suite.isWatching)

            try FileManager.default.removeItem(at: directory)
            try await waitUntil { !suite.isWatching }
            let result = try TestHelper.run(["observation-write", directory.path, name, "volume", "7"])
            #expect(result.status == 0, "\(result.error)")
            try await recorder.wait(count: 1)
            #expect(recorder.values == [7])
            #expect(suite.isWatching)

            // And from then on, as before.
            let again = try TestHelper.run(["observation-write", directory.path, name, "volume", "8"])
            #expect(again.status == 0, "\(again.error)")
            try await recorder.wait(count: 2)
            #expect(recorder.values == [7, 8])
        }

        /// Moved away, the directory is no longer the suite's: watching follows the path, not it.
        @Test func aMovedDirectoryIsNotWatchedInItsNewPlace() async throws {
            let name = "swift-defaults-tests-\(UUID().uuidString)"
            let directory = ObservationFiles.directory.appendingPathComponent(name, isDirectory: true)
            let suite = FileSuite(name: name, directory: directory, arguments: [])
            // Observed, so watched (and its directory made) from now on.
            let observation = Defaults.observe(Defaults.Key<Int>("volume", default: 1, suite: suite)) { _ in }
            defer { observation.invalidate() }
            try FileManager.default.moveItem(at: directory, to: directory.appendingPathExtension("old"))
            try await waitUntil { !suite.isWatching }
            let result = try TestHelper.run(["observation-write", directory.path, name, "volume", "5"])
            #expect(result.status == 0, "\(result.error)")
            try await waitUntil { suite.object(forKey: "volume") as? Int == 5 }
            #expect(suite.isWatching)
        }
    }
}
