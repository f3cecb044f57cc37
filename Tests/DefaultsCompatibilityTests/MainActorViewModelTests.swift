import Defaults
import TestSupport
import Testing

/// A value that is not `Sendable`: a class stored as JSON.
final class Theme: Codable, Defaults.Serializable {
    var name: String
    var accent: [Int]

    init(name: String, accent: [Int]) {
        self.name = name
        self.accent = accent
    }
}

// A plain `@MainActor` view model (no `@Observable`) that follows keys with `Defaults.updates`,
// as Defaults users write it, for a `Sendable` value, a non-`Sendable` one, several keys as a
// tuple and a list of keys.
@MainActor
final class SettingsViewModel {
    private(set) var volume = 0
    private(set) var theme = Theme(name: "", accent: [])
    private(set) var summary = ""
    private(set) var refreshes = 0
    private(set) var isMuted = false
    private var tasks: [Task<Void, Never>] = []
    private var mutedObservation: Defaults.Observation?

    func observeMuting(_ key: Defaults.Key<Bool>) {
        mutedObservation = Defaults.observe(key) { [weak self] change in
            self?.isMuted = change.newValue
        }
    }

    func start(volume volumeKey: Defaults.Key<Int>, theme themeKey: Defaults.Key<Theme>) {
        tasks.append(
            Task {
                for await volume in Defaults.updates(volumeKey) {
                    self.volume = volume
                }
            })
        tasks.append(
            Task {
                for await theme in Defaults.updates(themeKey) {
                    self.theme = theme
                }
            })
        tasks.append(
            Task {
                for await (volume, theme) in Defaults.updates(volumeKey, themeKey) {
                    self.summary = "\(theme.name) at \(volume)"
                }
            })
        tasks.append(
            Task {
                for await _ in Defaults.updates([volumeKey, themeKey]) {
                    self.refreshes += 1
                }
            })
    }

    func stop() {
        for task in tasks {
            task.cancel()
        }
        tasks = []
    }
}

@Suite("Defaults.updates in a @MainActor view model", .mayBlock)
@MainActor
struct MainActorViewModelTests {
    let suite = makeSuite()

    @Test func valuesArriveOnTheMainActor() async throws {
        let volumeKey = Defaults.Key<Int>("volume", default: 5, suite: suite)
        let themeKey = Defaults.Key<Theme>("theme", default: Theme(name: "Light", accent: [1, 2]), suite: suite)
        let model = SettingsViewModel()
        model.start(volume: volumeKey, theme: themeKey)
        try await waitUntil("the initial values") {
            model.volume == 5 && model.theme.name == "Light" && model.summary == "Light at 5"
                && model.refreshes == 1
        }

        Defaults[volumeKey] = 8
        try await waitUntil("the new volume") { model.volume == 8 && model.summary == "Light at 8" }

        Defaults[themeKey] = Theme(name: "Dark", accent: [3])
        try await waitUntil("the new theme") { model.theme.name == "Dark" && model.summary == "Dark at 8" }
        #expect(model.theme.accent == [3])
        try await waitUntil("one refresh a change") { model.refreshes == 3 }
        model.stop()
    }

    @Test func anObserverSetsTheViewModelsPropertiesOnTheMainActor() {
        let mutedKey = Defaults.Key<Bool>("isMuted", default: false, suite: suite)
        let model = SettingsViewModel()
        model.observeMuting(mutedKey)
        #expect(!model.isMuted)
        // Written on the main actor, so the handler runs there, before the write returns.
        Defaults[mutedKey] = true
        #expect(model.isMuted)
        mutedKey.reset()
        #expect(!model.isMuted)
    }

    @Test func aNonSendableValueIsItsOwnInstanceForEachConsumer() async throws {
        let themeKey = Defaults.Key<Theme>("theme", default: Theme(name: "Light", accent: []), suite: suite)
        var first: Theme?
        var second: Theme?
        let firstTask = Task {
            for await theme in Defaults.updates(themeKey) {
                first = theme
            }
        }
        let secondTask = Task {
            for await theme in Defaults.updates(themeKey) {
                second = theme
            }
        }
        Defaults[themeKey] = Theme(name: "Dark", accent: [7])
        try await waitUntil("both consumers") { first?.name == "Dark" && second?.name == "Dark" }
        first?.accent.append(8)
        #expect(second?.accent == [7])
        #expect(Defaults[themeKey].accent == [7])
        firstTask.cancel()
        secondTask.cancel()
    }
}
