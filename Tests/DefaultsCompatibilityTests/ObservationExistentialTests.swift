import Defaults
import Testing

// Observations kept as Defaults' protocol, as Defaults' own stress test keeps them and as code
// built with the `ExistentialAny` feature must spell them: `any Defaults.Observation`.
final class SettingsWindow {
    var observations: [any Defaults.Observation] = []
    var seen: [String] = []

    init(title: Defaults.Key<String>, zoom: Defaults.Key<Int>) {
        observations.append(
            Defaults.observe(title, options: []) { [unowned self] change in
                self.seen.append("title \(change.newValue)")
            })
        observations.append(
            Defaults.observe(keys: title, zoom, options: []) { [unowned self] in
                self.seen.append("any")
            })
    }

    func close() {
        for observation in observations {
            observation.invalidate()
        }
        observations.removeAll()
    }
}

@Suite struct ObservationExistentialTests {
    let suite = makeSuite()

    @Test func observationsKeptAsTheProtocolDeliverAndStop() {
        let title = Defaults.Key<String>("title", default: "", suite: suite)
        let zoom = Defaults.Key<Int>("zoom", default: 1, suite: suite)
        let window = SettingsWindow(title: title, zoom: zoom)
        Defaults[title] = "Draft"
        #expect(window.seen == ["title Draft", "any"])
        window.close()
        Defaults[title] = "Final"
        Defaults[zoom] = 2
        #expect(window.seen == ["title Draft", "any"])
    }

    @Test func tieAndUntieThroughTheExistential() {
        let zoom = Defaults.Key<Int>("zoom", default: 1, suite: suite)
        var calls = 0
        var owner: Owner? = Owner()
        let observation: any Defaults.Observation = Defaults.observe(zoom, options: []) { _ in calls += 1 }
        // `tieToLifetime(of:)` returns the same observation, as the existential it was called on.
        let tied: any Defaults.Observation = observation.tieToLifetime(of: owner!)
        #expect(tied === observation)
        Defaults[zoom] = 2
        #expect(calls == 1)
        observation.removeLifetimeTie()
        owner = nil
        // Untied, it lives as long as `observation` does.
        Defaults[zoom] = 3
        #expect(calls == 2)
        observation.tieToLifetime(of: Owner())
        // Tied to an object already gone: it delivers no more.
        Defaults[zoom] = 4
        #expect(calls == 2)
        #expect(owner == nil)
    }

    private final class Owner {}
}
