import Defaults
import Foundation
import Synchronization
import Testing

/// A suite of the application's own (a conformance to `DefaultsSuite` outside the library) has
/// none of the capabilities of the library's suites, and gets the answers of a suite without
/// them: keys read and write through its doors, every key is writable, observers see its
/// changes, and a migration moves a value through its `setValues`.
@Suite(.timeLimit(.minutes(1)))
struct ApplicationSuiteTests {
    @Test("Keys, writability and observation of a suite of the application's own")
    func keysWritabilityAndObservation() {
        let suite = ApplicationSuite()
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        #expect(Defaults[volume] == 5)
        #expect(Defaults.writability(of: volume) == .writable)

        let seen = Mutex<[Int]>([])
        let observation = Defaults.observe(volume, options: []) { change in
            seen.withLock { $0.append(change.newValue) }
        }
        Defaults[volume] = 7
        #expect(Defaults[volume] == 7)
        #expect(suite.persistentValues()["volume"] as? Int == 7)
        Defaults.reset(volume)
        #expect(Defaults[volume] == 5)
        #expect(seen.withLock { $0 } == [7, 5])
        #expect(Defaults.writability(of: volume) == .writable)
        observation.invalidate()
    }

    @Test("A migration of a suite of the application's own moves the value through its doors")
    func migrationMovesTheValue() {
        let suite = ApplicationSuite(values: ["textSize": 14])
        let fontSize = Defaults.Key<Int>("fontSize", default: 12, suite: suite, migrating: .renamed(from: "textSize"))
        #expect(Defaults[fontSize] == 14)
        #expect(suite.persistentValues()["textSize"] == nil)
    }
}
