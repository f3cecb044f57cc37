import Defaults
import TestSupport
import Testing

// Code that names the type Defaults' `updates` returns: `AsyncStream`.
final class VolumeMonitor {
    let volume: Defaults.Key<Int>
    let isMuted: Defaults.Key<Bool>

    init(volume: Defaults.Key<Int>, isMuted: Defaults.Key<Bool>) {
        self.volume = volume
        self.isMuted = isMuted
    }

    func volumes() -> AsyncStream<Int> {
        Defaults.updates(volume)
    }

    func states() -> AsyncStream<(Int, Bool)> {
        Defaults.updates(volume, isMuted, initial: false)
    }

    var anyChange: AsyncStream<Void> {
        Defaults.updates([volume, isMuted])
    }
}

@Suite("updates as an AsyncStream")
struct AsyncStreamUpdatesTests {
    let suite = makeSuite()

    @Test func streamsNamedAsDefaultsReturnsThemCarryTheValues() async {
        let monitor = VolumeMonitor(
            volume: Defaults.Key<Int>("volume", default: 5, suite: suite),
            isMuted: Defaults.Key<Bool>("isMuted", default: false, suite: suite)
        )
        let volumes = monitor.volumes()
        let states = monitor.states()
        let anyChange = monitor.anyChange
        Defaults[monitor.volume] = 7
        Defaults[monitor.isMuted] = true

        var seenVolumes: [Int] = []
        for await volume in volumes {
            seenVolumes.append(volume)
            if volume == 7 { break }
        }
        #expect(seenVolumes == [5, 7])

        var seenStates: [String] = []
        for await (volume, isMuted) in states {
            seenStates.append("\(volume) \(isMuted)")
            if isMuted { break }
        }
        #expect(seenStates == ["7 false", "7 true"])

        var changes = 0
        for await _ in anyChange {
            changes += 1
            if changes == 3 { break }
        }
        #expect(changes == 3)
    }
}
