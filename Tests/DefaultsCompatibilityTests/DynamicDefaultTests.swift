import Defaults
import Testing

/// State that is not `Sendable`, read by dynamic defaults.
final class DeviceState {
    var preferredCamera = "front"
    var screenWidth = 1280
}

@Suite("Dynamic defaults capturing non-Sendable state")
struct DynamicDefaultTests {
    let suite = makeSuite()

    @Test func theDefaultIsComputedFromTheCapturedStateOnEachRead() {
        let device = DeviceState()
        // The three spellings Defaults users write: trailing closure, `iCloud:` before it, `default:`.
        let camera = Defaults.Key<String>("camera", suite: suite) { device.preferredCamera }
        let width = Defaults.Key<Int>("width", suite: suite, iCloud: false) { device.screenWidth / 2 }
        let label = Defaults.Key<String?>("label", suite: suite, default: { "\(device.preferredCamera) camera" })

        #expect(Defaults[camera] == "front")
        #expect(Defaults[width] == 640)
        device.preferredCamera = "back"
        device.screenWidth = 2000
        #expect(Defaults[camera] == "back")
        #expect(Defaults[width] == 1000)
        #expect(Defaults[label] == "back camera")

        Defaults[camera] = "external"
        device.preferredCamera = "front"
        #expect(Defaults[camera] == "external")
        camera.reset()
        #expect(Defaults[camera] == "front")
        #expect(suite.object(forKey: "camera") == nil)
    }

    @Test func observersSeeTheDynamicDefaultAfterAReset() {
        let device = DeviceState()
        let camera = Defaults.Key<String>("camera", suite: suite) { device.preferredCamera }
        var seen: [String] = []
        let observation = Defaults.observe(camera) { change in
            seen.append(change.newValue)
        }
        Defaults[camera] = "external"
        device.preferredCamera = "back"
        Defaults.reset(camera)
        #expect(seen == ["front", "external", "back"])
        observation.invalidate()
    }
}
