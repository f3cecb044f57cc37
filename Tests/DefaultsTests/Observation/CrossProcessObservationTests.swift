@_spi(Observation) import Defaults
import Foundation
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
    }
}
