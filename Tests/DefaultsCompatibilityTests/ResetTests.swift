import Defaults
import Testing

@Suite("Resetting keys")
struct ResetTests {
    let suite = makeSuite()

    @Test func everySpellingOfResetRestoresTheDefault() {
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        let name = Defaults.Key<String?>("name", suite: suite)
        let tags = Defaults.Key<[String]>("tags", default: ["new"], suite: suite)
        let set = {
            Defaults[volume] = 9
            Defaults[name] = "Main"
            Defaults[tags] = []
        }
        let isDefault = { Defaults[volume] == 5 && Defaults[name] == nil && Defaults[tags] == ["new"] }

        set()
        Defaults.reset(volume, name, tags)
        #expect(isDefault())
        set()
        Defaults.reset(volume, name, tags, suite: .standard)
        #expect(isDefault())
        set()
        Defaults.reset([volume, name, tags])
        #expect(isDefault())
        set()
        volume.reset()
        name.reset()
        tags.reset()
        #expect(isDefault())
    }
}
