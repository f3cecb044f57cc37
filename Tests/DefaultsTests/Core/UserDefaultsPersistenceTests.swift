import Defaults
import Foundation
import TestSupport
import Testing

/// Foundation on Linux loses values that were not synchronized; writes through the library must not.
@Suite("UserDefaults persistence", .mayBlock)
struct UserDefaultsPersistenceTests {
    @Test func valueWrittenWithoutSynchronizeSurvivesNormalExit() throws {
        let suite = "swift-defaults-tests-\(UUID().uuidString)"
        TemporarySuites.remember(suite)
        let write = try TestHelper.run(["userdefaults-write", suite, "41"])
        #expect(write.status == 0, "\(write.error)")
        let read = try TestHelper.run(["userdefaults-read", suite])
        #expect(read.status == 0, "\(read.error)")
        #expect(read.output.trimmingCharacters(in: .whitespacesAndNewlines) == "41")
    }
}
