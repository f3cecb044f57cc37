import Defaults
import DefaultsMacros
import Observation
import Synchronization
import Testing

// This file imports Defaults without any SPI, as a user's module does: that the class below
// compiles shows that the macro's expansion uses public API only.

private let publicAPISuite = InMemorySuite()

extension Defaults.Keys {
    fileprivate static let publicAPIVolume = Key<Int>("publicAPIVolume", default: 5, suite: publicAPISuite)
}

@Observable
private final class PublicAPIModel {
    @ObservableDefault(.publicAPIVolume)
    @ObservationIgnored
    var volume: Int
}

@Suite struct ObservableDefaultPublicAPITests {
    @Test func expansionCompilesAndTracksWithoutSPI() {
        let model = PublicAPIModel()
        #expect(model.volume == 5)
        let changes = Mutex(0)
        withObservationTracking {
            _ = model.volume
        } onChange: {
            changes.withLock { $0 += 1 }
        }
        // A change made around the property, on this thread: `onChange` runs before `set` returns.
        Defaults[.publicAPIVolume] = 8
        #expect(changes.withLock { $0 } == 1)
        #expect(model.volume == 8)
    }
}
