import Defaults
import Testing

// A plain class, not `Sendable`, that observes keys and keeps what it is told in its own
// properties: the usual Defaults code. Its handlers are not `@Sendable`, and capture `self`.
final class PlayerController {
    var volume = 0
    var volumeHistory: [Int] = []
    var settingsChanges = 0
    var clampedQualities = 0
    private var volumeObservation: Defaults.Observation?

    init(volume: Defaults.Key<Int>, isMuted: Defaults.Key<Bool>, quality: Defaults.Key<Double>) {
        volumeObservation = Defaults.observe(volume) { [weak self] change in
            self?.volume = change.newValue
            self?.volumeHistory.append(change.newValue)
        }

        Defaults.observe(keys: volume, isMuted, options: []) { [unowned self] in
            self.settingsChanges += 1
        }
        .tieToLifetime(of: self)

        Defaults.observe(quality, options: []) { [unowned self] change in
            guard change.newValue > 1 else { return }
            Defaults.withoutPropagation {
                Defaults[quality] = 1
            }
            self.clampedQualities += 1
        }
        .tieToLifetime(of: self)
    }

    func stopObservingVolume() {
        volumeObservation?.invalidate()
        volumeObservation = nil
    }
}

@Suite("A non-Sendable class observing keys")
struct ObservingClassTests {
    let suite = makeSuite()

    @Test func handlersSetTheObserversOwnProperties() {
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        let isMuted = Defaults.Key<Bool>("isMuted", default: false, suite: suite)
        let quality = Defaults.Key<Double>("quality", default: 0.5, suite: suite)
        let player = PlayerController(volume: volume, isMuted: isMuted, quality: quality)
        #expect(player.volume == 5)

        // Changes made on this thread reach the handlers before the write returns.
        Defaults[volume] = 7
        #expect(player.volume == 7)
        Defaults[isMuted] = true
        #expect(player.settingsChanges == 2)
        Defaults.reset(volume)
        #expect(player.volumeHistory == [5, 7, 5])
        #expect(player.settingsChanges == 3)

        player.stopObservingVolume()
        Defaults[volume] = 9
        #expect(player.volume == 5)
        #expect(player.settingsChanges == 4)
    }

    @Test func aHandlerWritesItsOwnKeyWithoutPropagation() {
        let quality = Defaults.Key<Double>("quality", default: 0.5, suite: suite)
        let player = PlayerController(
            volume: Defaults.Key<Int>("volume", default: 5, suite: suite),
            isMuted: Defaults.Key<Bool>("isMuted", default: false, suite: suite),
            quality: quality
        )
        Defaults[quality] = 3
        #expect(Defaults[quality] == 1)
        #expect(player.clampedQualities == 1)
        Defaults[quality] = 0.7
        #expect(player.clampedQualities == 1)
    }

    @Test func tiedObservationsEndWithTheirObject() {
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        let isMuted = Defaults.Key<Bool>("isMuted", default: false, suite: suite)
        var changes = 0
        var player: PlayerController? = PlayerController(
            volume: volume, isMuted: isMuted, quality: Defaults.Key<Double>("quality", default: 0.5, suite: suite))
        let counter = Defaults.observe(keys: [volume, isMuted], options: []) { changes += 1 }
        Defaults[isMuted] = true
        #expect(player?.settingsChanges == 1)
        weak let released = player
        player = nil
        #expect(released == nil)
        // The tied handlers (`unowned self`) are not called once their object is gone.
        Defaults[isMuted] = false
        #expect(changes == 2)
        counter.invalidate()
    }
}
