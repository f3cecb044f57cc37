import Defaults
import Foundation
import Synchronization
import Testing

private let snapshotHomeSuite = InMemorySuite(name: "snapshot-home")

private struct AudioSettings: Defaults.SnapshotSchema {
    var volume = Defaults.Key<Int>("volume", default: 5, suite: snapshotHomeSuite)
    var isMuted = Defaults.Key<Bool>("isMuted", default: false, suite: snapshotHomeSuite)
    var device = Defaults.Key<String?>("device", suite: snapshotHomeSuite)
    var presets = Defaults.Key<[Int?]>("presets", default: [], suite: snapshotHomeSuite)
}

/// Value-type app state that embeds a snapshot.
private struct PlayerState: Equatable, Sendable {
    var settings: Defaults.Snapshot<AudioSettings>
    var isPlaying = false
}

private struct Boom: Error {}

/// Counts the change events a suite posts.
private final class PostCounter: Sendable {
    private final class Posts: Sendable {
        let list = Mutex<[Set<String>]>([])
    }

    private let posts = Posts()
    private let token: SuiteChangeCenter.Token
    private let center: SuiteChangeCenter

    init(_ suite: any DefaultsSuite) {
        center = suite.changes
        token = center.addObserver { [posts] change in posts.list.withLock { $0.append(change.keys) } }
    }

    deinit {
        center.removeObserver(token)
    }

    var changes: [Set<String>] {
        posts.list.withLock { $0 }
    }
}

extension Integrations {
    @Suite struct SnapshotTests {
        @Test func snapshotReadsTypedValuesAndStaysImmutable() {
            let suite = InMemorySuite()
            let store = Defaults.SnapshotStore(AudioSettings(), suite: suite)
            let before = store.snapshot
            #expect(before.volume == 5)
            #expect(before[\.isMuted] == false)
            #expect(before.device == nil)

            suite.set(9, forKey: "volume")
            #expect(before.volume == 5)
            let after = store.snapshot
            #expect(after.volume == 9)
            #expect(before != after)
            #expect(after == store.snapshot)
            #expect(PlayerState(settings: after) == PlayerState(settings: store.snapshot))
            #expect(snapshotHomeSuite.persistentValues().isEmpty)
        }

        @Test func writeAppliesAllChangesAsOneEventAndOneFlush() throws {
            let suite = InMemorySuite()
            let store = Defaults.SnapshotStore(AudioSettings(), suite: suite)
            let counter = PostCounter(suite)
            let result = try store.write { draft in
                draft.volume = 7
                draft.volume += 1
                draft.isMuted = true
                draft.device = "speakers"
                #expect(draft.volume == 8)
                #expect(draft.base.volume == 5)
                return "done"
            }
            #expect(result == "done")
            #expect(counter.changes == [["volume", "isMuted", "device"]])
            #expect(suite.object(forKey: "volume") as? Int == 8)
            #expect(store.snapshot.device == "speakers")

            try store.write { draft in draft.device = nil }
            #expect(suite.object(forKey: "device") == nil)
            #expect(counter.changes.count == 2)
        }

        @Test func throwingTransactionLeavesNothingChanged() {
            let suite = InMemorySuite(values: ["volume": 2])
            let store = Defaults.SnapshotStore(AudioSettings(), suite: suite)
            let counter = PostCounter(suite)
            let before = store.snapshot
            #expect(throws: Boom.self) {
                try store.write { draft in
                    draft.volume = 11
                    draft.isMuted = true
                    throw Boom()
                }
            }
            #expect(store.snapshot == before)
            #expect(suite.persistentValues().count == 1)
            #expect(counter.changes.isEmpty)
        }

        @Test func unserializableValueFailsTheWholeTransaction() {
            let suite = InMemorySuite()
            let store = Defaults.SnapshotStore(AudioSettings(), suite: suite)
            #expect(throws: DefaultsError.self) {
                try store.write { draft in
                    draft.volume = 1
                    draft.presets = [1, nil, 3]  // an array with a hole has no property-list form
                }
            }
            #expect(suite.persistentValues().isEmpty)
        }

        @Test func streamYieldsOncePerTransaction() async throws {
            let suite = InMemorySuite()
            let store = Defaults.SnapshotStore(AudioSettings(), suite: suite)
            let snapshots = store.snapshots()
            try store.write { draft in
                draft.volume = 1
                draft.isMuted = true
                draft.device = "a"
            }
            try store.write { draft in
                draft.volume = 2
                draft.device = "b"
            }
            // A single-key change after the transactions: had a transaction yielded once per key, its
            // intermediate snapshots would come before this one.
            suite.set(3, forKey: "volume")
            var received: [Defaults.Snapshot<AudioSettings>] = []
            for await snapshot in snapshots {
                received.append(snapshot)
                if received.count == 4 { break }
            }
            #expect(received.map(\.volume) == [5, 1, 2, 3])
            #expect(received.map(\.device) == [nil, "a", "b", "b"])
            #expect(received.map(\.isMuted) == [false, true, true, true])
        }

        @Test(arguments: ["userDefaults", "file"])
        func otherSuitesPostOneEventPerTransaction(kind: String) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "snapshots-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let suite: any DefaultsSuite
            if kind == "file" {
                suite = FileSuite(name: "snapshots", directory: directory, arguments: [])
            } else {
                suite = SuiteKind.userDefaults.make()
            }
            let store = Defaults.SnapshotStore(AudioSettings(), suite: suite)
            let counter = PostCounter(suite)
            try store.write { draft in
                draft.volume = 4
                draft.isMuted = true
            }
            #expect(counter.changes == [["volume", "isMuted"]])
            #expect(store.snapshot.volume == 4)
            if let fileSuite = suite as? FileSuite {
                let data = try Data(contentsOf: fileSuite.fileURL)
                #expect(String(decoding: data, as: UTF8.self).contains("<key>volume</key>"))
            }
            try store.write { draft in
                draft.volume = 5
                draft.isMuted = false
            }
            #expect(counter.changes.count == 2)
        }
    }
}
