import Defaults
import Testing

extension Defaults.Keys {
    static let mixerVolume = Key<Int>("mixerVolume", default: 5, suite: sharedSuite)
    static let mixerName = Key<String?>("mixerName", suite: sharedSuite)
    static let panelWidth = Key<Double>("panelWidth", default: 240, suite: sharedSuite)
}

// `@Default` in classes, as Defaults users write it: a plain class, and a `@MainActor` one.
final class Mixer {
    @Default(.mixerVolume) var volume
    @Default(.mixerName) var name

    func louder() {
        volume += 1
    }
}

@MainActor
final class PanelModel {
    @Default(.panelWidth) var width

    func widen(by points: Double) {
        width += points
    }
}

@Suite("@Default in a class")
struct DefaultPropertyWrapperTests {
    @Test func aPlainClassReadsAndWritesThroughTheKey() {
        let mixer = Mixer()
        #expect(mixer.volume == 5)
        #expect(mixer.name == nil)
        mixer.louder()
        mixer.name = "Main"
        #expect(Defaults[.mixerVolume] == 6)
        #expect(Defaults[.mixerName] == "Main")
        Defaults[.mixerVolume] = 9
        #expect(Mixer().volume == 9)
        mixer.$volume.reset()
        mixer.name = nil
        #expect(mixer.volume == 5)
        #expect(Defaults[.mixerName] == nil)
    }

    @Test @MainActor func aMainActorClassReadsAndWritesThroughTheKey() async {
        let panel = PanelModel()
        var widths: [Double] = []
        let observation = panel.$width.observe { change in
            widths.append(change.newValue)
        }
        panel.widen(by: 60)
        #expect(Defaults[.panelWidth] == 300)
        #expect(widths == [240, 300])
        observation.invalidate()
        panel.$width.reset()
        #expect(panel.width == 240)
    }
}
