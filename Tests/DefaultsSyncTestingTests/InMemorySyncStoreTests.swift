import Defaults
import DefaultsSyncTesting
import Foundation
import TestSupport
import Testing

/// The in-memory store keeps the contract of `DefaultsSyncStore` as PostgreSQL's store does: the
/// last writer wins, changes numbered in the order they are stored, each push delivered to the
/// other machines, and the failures a test asks for.
@Suite(.mayBlock)
struct InMemorySyncStoreTests {
    @Test func theLatestVersionOfEachKeyWinsAndAnOlderOneIsNotStored() async throws {
        let server = InMemorySyncServer()
        let a = RunningStore(InMemorySyncStore(server: server, name: "a"))
        try await a.waitUntilConnected()
        try await a.store.push([record("k", "new", at: 20)])
        try await a.store.push([record("k", "old", at: 10), record("other", "1", at: 5)])
        try await a.store.push([record("k", "same time", at: 20)])  // replaced only by a later one
        #expect(server.record(forKey: "k")?.value == Data("new".utf8))
        #expect(
            try await a.store.timestamps() == [
                "k": .init(wallTime: 20, counter: 0, origin: "a"), "other": .init(wallTime: 5, counter: 0, origin: "a"),
            ])
        #expect(try await a.store.records(forKeys: ["k", "missing"]).map(\.key) == ["k"])
        #expect(server.pushCount == 3)
        #expect(server.latestChangeNumber == 2, "two records stored, two changes")
        // A removal is a record without a value, and wins like any other.
        try await a.store.push([record("k", nil, at: 30)])
        #expect(server.records["k"]?.value == nil && server.records["k"] != nil)
    }

    @Test func eachPushReachesTheOtherMachinesAndAReconnectionTakesWhatItMissed() async throws {
        let server = InMemorySyncServer()
        let aStore = InMemorySyncStore(server: server, name: "a")
        let bStore = InMemorySyncStore(server: server, name: "b")
        let a = RunningStore(aStore)
        let b = RunningStore(bStore)
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()
        #expect(try await b.store.changesSinceLastConnection() == [], "nothing missed yet")

        try await a.store.push([record("x", "1", at: 1), record("y", "1", at: 1)])
        try await b.waitUntil("b to receive a's push") { _ in b.received.count == 2 }
        #expect(a.received.isEmpty, "a push is not delivered back to its own store")
        // What a push stored only: an older record is not delivered.
        try await a.store.push([record("x", "0", at: 0)])

        bStore.disconnect()
        try await b.waitUntil("b to be disconnected") { _ in !b.disconnections.isEmpty }
        #expect(!bStore.isConnected)
        await #expect(throws: InMemorySyncError.self) { try await bStore.push([record("z", "b", at: 1)]) }
        await #expect(throws: InMemorySyncError.self) { _ = try await bStore.timestamps() }
        try await a.store.push([record("x", "2", at: 2)])
        try await a.store.push([record("w", "2", at: 2)])

        bStore.reconnect()
        try await b.waitUntilConnected(times: 2)
        #expect(b.received.count == 2, "nothing delivered while disconnected")
        // The changes after the last one b reported, in the order they were stored; a's own
        // pushes count as seen by a.
        #expect(try await b.store.changesSinceLastConnection()?.map(\.key) == ["x", "w"])
        #expect(try await b.store.changesSinceLastConnection() == [])
        #expect(try await a.store.changesSinceLastConnection() == [], "a saw its own pushes")
    }

    @Test func failuresAskedForFailThatManyCallsAndStoreNothing() async throws {
        let server = InMemorySyncServer()
        let store = InMemorySyncStore(server: server)
        let running = RunningStore(store)
        try await running.waitUntilConnected()

        store.failNextPushes(2)
        for _ in 0..<2 {
            await #expect(throws: InMemorySyncError.self) { try await store.push([record("k", "v", at: 1)]) }
        }
        #expect(server.records.isEmpty && server.pushCount == 0, "a failed push never reached the server")
        try await store.push([record("k", "v", at: 1)])
        #expect(server.pushCount == 1 && server.records.count == 1)

        struct Outage: Error {}
        store.failNextFetches(1, with: Outage())
        await #expect(throws: Outage.self) { _ = try await store.records(forKeys: ["k"]) }
        #expect(try await store.records(forKeys: ["k"]).count == 1)
    }

    @Test func refusedKeysAreNamedAndTheRestIsStored() async throws {
        let server = InMemorySyncServer()
        server.refusedKeys = ["bad": "too long for the index"]
        let running = RunningStore(InMemorySyncStore(server: server))
        try await running.waitUntilConnected()
        let error = await #expect(throws: SyncRecordsRefused.self) {
            try await running.store.push([record("bad", "1", at: 1), record("good", "1", at: 1)])
        }
        #expect(error?.reasons == ["bad": "too long for the index"])
        #expect(Set(server.records.keys) == ["good"])
    }

    @Test func someoneWithTheDatabaseCanPutBackAnOlderRecordOrEraseEverything() async throws {
        let server = InMemorySyncServer()
        let a = RunningStore(InMemorySyncStore(server: server, name: "a"))
        let b = RunningStore(InMemorySyncStore(server: server, name: "b"))
        try await a.waitUntilConnected()
        try await b.waitUntilConnected()
        try await a.store.push([record("k", "new", at: 20)])
        try await b.waitUntil("b to receive k") { _ in b.received.count == 1 }

        // Stored whatever the version, numbered and delivered to every store, a's too.
        server.overwrite([record("k", "old", at: 10)])
        #expect(server.record(forKey: "k")?.value == Data("old".utf8))
        try await a.waitUntil("a to receive the overwrite") { _ in a.received.count == 1 }
        try await b.waitUntil("b to receive the overwrite") { _ in b.received.count == 2 }

        server.removeRecords(forKeys: ["k"])
        #expect(server.records.isEmpty)
        try await a.store.push([record("j", "1", at: 1)])
        server.eraseAll()
        // The numbers went back: a new database, which the library catches up with in full.
        #expect(try await b.store.changesSinceLastConnection() == nil)
    }

    @Test func aCallCancelledWhileItWaitsOutTheLatencyStoresNothing() async throws {
        let server = InMemorySyncServer()
        let store = InMemorySyncStore(server: server)
        let running = RunningStore(store)
        try await running.waitUntilConnected()
        store.latency = .seconds(3_600)
        let push = Task { try await store.push([record("k", "v", at: 1)]) }
        push.cancel()
        await #expect(throws: CancellationError.self) { try await push.value }
        #expect(server.pushCount == 0)
        store.latency = .zero
        try await store.push([record("k", "v", at: 1)])
        #expect(server.pushCount == 1)
    }

    @Test func aStoppedStoreIsNotConnected() async throws {
        let server = InMemorySyncServer()
        let store = InMemorySyncStore(server: server)
        let running = RunningStore(store)
        try await running.waitUntilConnected()
        #expect(store.isConnected)
        running.stop()
        try await waitUntil("the store to stop") { !store.isConnected }
        await #expect(throws: InMemorySyncError.self) { try await store.push([record("k", "v", at: 1)]) }
    }
}
