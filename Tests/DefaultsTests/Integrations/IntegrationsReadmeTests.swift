import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

// The README's examples for the integrations, as written there. They use the standard suite, so
// they run one at a time and reset what they touch.

extension Defaults.Keys {
    fileprivate static let volume = Key<Int>("volume", default: 5)
    fileprivate static let userName = Key<String?>("userName")
}

private struct Player {
    @Default(.volume) var volume
}

private final class Mixer {
    @Default var volume: Int

    init(suite: any DefaultsSuite = Defaults.standardSuite) {
        _volume = Default(.volume, suite: suite)
    }
}

private enum BookSettings: Defaults.KeyGroup {
    static let namespace = "book"
    static let id = key("id", default: 0)  // stored as "book:id"
}

private enum ComicSettings: Defaults.KeyGroup {
    static let namespace = "comic"
    static let id = key("id", default: 0)  // stored as "comic:id"
}

private struct AudioSettings: Defaults.SnapshotSchema {
    var volume = Defaults.Keys.volume
    var isMuted = Defaults.Key<Bool>("isMuted", default: false)
}

extension Integrations {
    @Suite(.serialized) struct IntegrationsReadmeTests {
        @Test func propertyWrapper() {
            defer { Defaults.reset(.volume) }
            let player = Player()
            player.volume = 7  // Defaults[.volume] = 7
            #expect(Defaults[.volume] == 7)
            player.$volume.reset()  // back to 5
            #expect(player.volume == 5)
            let seen = Mutex<[Int]>([])
            let observation = player.$volume.observe { change in
                seen.withLock { $0.append(change.newValue) }
            }
            observation.invalidate()
            #expect(seen.withLock { $0 } == [5])  // the value at the start

            let testSuite = InMemorySuite()
            let mixer = Mixer(suite: testSuite)
            mixer.volume = 2
            #expect(Defaults[.volume.in(testSuite)] == 2)
            #expect(Defaults[.volume] == 5)
        }

        @Test func keyGroups() {
            defer { Defaults.reset(BookSettings.id, ComicSettings.id) }
            Defaults[BookSettings.id] = 5
            Defaults[ComicSettings.id] = 10
            #expect(Defaults[BookSettings.id] == 5)
            for conflict in Defaults.KeyRegistry.conflicts {
                CapturedLogs.note("\(conflict)")  // names both declarations
            }
            #expect(Defaults.KeyRegistry.conflicts(in: Defaults.standardSuite).isEmpty)
        }

        @Test func snapshots() async throws {
            let store = Defaults.SnapshotStore(AudioSettings())
            defer { Defaults.reset(store.keys) }
            let snapshots = store.snapshots()
            try store.write { draft in
                draft.volume = 3
                draft.isMuted = true
            }
            let snapshot = store.snapshot  // Sendable, Equatable
            #expect(snapshot.volume == 3)
            var count = 0
            for await snapshot in snapshots {
                count += 1  // the first one, then one per transaction
                if count == 2 {
                    #expect(snapshot.isMuted)
                    break
                }
            }
        }

        @Test func launchArguments() throws {
            let arguments = try Defaults.LaunchArguments()
                .setting(.volume, to: 8)
                .setting(.userName, to: nil)
                .arguments
            #expect(arguments == ["-volume", "<integer>8</integer>", "-userName", "<swift-defaults:absent/>"])
            // app.launchArguments += arguments             (XCUIApplication)
            // process.arguments = ["serve"] + arguments    (Process)
        }
    }
}
