import Defaults
import DefaultsMacros
import Foundation
import Observation
import Synchronization
import TestSupport
import Testing

private let macroSuite = InMemorySuite(name: "observable-default")
private let fileDirectory = FileManager.default.temporaryDirectory
    .appendingPathComponent("observable-default-\(UUID().uuidString)", isDirectory: true)
private let fileSuite = FileSuite(name: "observable-default", directory: fileDirectory, arguments: [])

extension Defaults.Keys {
    fileprivate static let macroVolume = Key<Int>("macroVolume", default: 5, suite: macroSuite)
    fileprivate static let macroName = Key<String?>("macroName", suite: macroSuite)
    fileprivate static let macroOwnerCheck = Key<Int>("macroOwnerCheck", default: 0, suite: macroSuite)
    fileprivate static let fileVolume = Key<Int>("volume", default: 5, suite: fileSuite)
}

@Observable
private final class PlayerModel {
    @ObservableDefault(.macroVolume)
    @ObservationIgnored
    var volume: Int

    @ObservableDefault(.macroName)
    @ObservationIgnored
    var name: String?

    /// An ordinary tracked property beside the macro's.
    var isPlaying = false
}

@Observable
private final class OwnerCheckModel {
    @ObservableDefault(.macroOwnerCheck)
    @ObservationIgnored
    var value: Int
}

@Observable
private final class FileModel {
    @ObservableDefault(.fileVolume)
    @ObservationIgnored
    var volume: Int
}

/// Compiles: the macro in a main-actor class.
@MainActor
@Observable
private final class MainActorModel {
    @ObservableDefault(.macroVolume)
    @ObservationIgnored
    var volume: Int
}

/// Records each `onChange` of an observation tracking.
private final class ChangeFlag: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    func fire() {
        count.withLock { $0 += 1 }
    }

    /// Waits until the flag has fired.
    func wait() async throws {
        try await waitUntil("onChange") { value > 0 }
    }
}

/// Tracks `read` once and returns the flag its `onChange` fires.
private func track(_ read: @escaping () -> Void) -> ChangeFlag {
    let flag = ChangeFlag()
    withObservationTracking(read, onChange: flag.fire)
    return flag
}

@Suite(.serialized, .mayBlock) struct ObservableDefaultTests {
    @Test func readsAndWritesThroughTheKey() {
        let model = PlayerModel()
        #expect(model.volume == Defaults[.macroVolume])
        model.volume = 8
        #expect(Defaults[.macroVolume] == 8)
        Defaults[.macroVolume] = 3
        #expect(model.volume == 3)
        model.name = "Ada"
        #expect(macroSuite.object(forKey: "macroName") as? String == "Ada")
        model.name = nil
        #expect(macroSuite.object(forKey: "macroName") == nil)
    }

    @Test func onChangeFiresForAChangeThroughTheSubscript() {
        let model = PlayerModel()
        Defaults[.macroVolume] = 1
        let flag = track { _ = model.volume }
        #expect(flag.value == 0)
        Defaults[.macroVolume] = 2
        #expect(flag.value == 1)
    }

    @Test func onChangeFiresForTheSetterAndForAnotherObject() {
        let model = PlayerModel()
        let other = PlayerModel()
        let ownFlag = track { _ = model.name }
        model.name = "first"
        #expect(ownFlag.value >= 1)

        let flag = track { _ = model.name }
        other.name = "second"
        #expect(flag.value == 1)
        #expect(model.name == "second")
    }

    @Test func onChangeFiresForResetAndNotForOtherKeys() {
        let model = PlayerModel()
        Defaults[.macroVolume] = 9
        let flag = track { _ = model.volume }
        Defaults[.macroName] = "unrelated"
        model.isPlaying = true
        #expect(flag.value == 0)
        Defaults.Keys.macroVolume.reset()
        #expect(flag.value == 1)
    }

    @Test func observationEndsWithTheObject() {
        var model: OwnerCheckModel? = OwnerCheckModel()
        let baseline = macroSuite.changes.observerCount
        _ = model?.value
        #expect(macroSuite.changes.observerCount == baseline + 1)
        _ = model?.value
        #expect(macroSuite.changes.observerCount == baseline + 1)
        model = nil
        #expect(macroSuite.changes.observerCount == baseline)
        Defaults[.macroOwnerCheck] = 4
    }

    @Test func onChangeFiresForAChangeMadeByAnotherProcess() async throws {
        try FileManager.default.createDirectory(at: fileDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: fileDirectory) }
        let model = FileModel()
        #expect(model.volume == 5)
        let flag = track { _ = model.volume }
        let result = try ChildProcess.run(
            builtExecutable("DefaultsTestHelper"),
            ["filesuite-set", fileDirectory.path, "observable-default", "volume", "<integer>7</integer>"])
        #expect(result.status == 0, "\(result)")
        try await flag.wait()
        #expect(model.volume == 7)
    }
}
