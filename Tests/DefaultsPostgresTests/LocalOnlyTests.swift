import Defaults
import DefaultsPostgres
import Foundation
import Synchronization
import TestSupport
import Testing

/// What `iCloud` keys do in a process with no sync store (this test process never connects one).
@Suite("iCloud keys without a store", .mayBlock)
struct LocalOnlyTests {
    @Test func keysAreRegisteredAndWorkLocally() async {
        let suite = InMemorySuite()
        let name = "localOnly\(UUID().uuidString.prefix(8))"
        let key = Defaults.Key<Int>(name, default: 1, suite: suite, iCloud: true)
        #expect(Defaults.iCloud.keys.contains(key))
        // The key as declared, typed, not a copy of its name.
        #expect(Defaults.iCloud.keys.contains { $0 === key })
        let seen = Mutex<[Int]>([])
        let observation = Defaults.observe(key, options: []) { change in seen.withLock { $0.append(change.newValue) } }
        Defaults[key] = 5
        #expect(Defaults[key] == 5)
        #expect(seen.withLock { $0 } == [5])
        observation.invalidate()
        await Defaults.iCloud.waitForSyncCompletion()  // returns at once: nothing to sync to
        #expect(Defaults.iCloud.status.store == nil)
        Defaults.iCloud.remove(key)
        #expect(!Defaults.iCloud.keys.contains(key))
        Defaults.iCloud.add(key)
        #expect(Defaults.iCloud.keys.contains(key))
        Defaults.iCloud.remove([key])
        #expect(!Defaults.iCloud.keys.contains(key))
    }

    @Test func everyInitializerTakesICloud() {
        let suite = InMemorySuite()
        let id = UUID().uuidString.prefix(8)
        let keys: [Defaults.Keys] = [
            Defaults.Key<Int>("a\(id)", default: 0, suite: suite, iCloud: true),
            Defaults.Key<Int>("b\(id)", suite: suite, iCloud: true, default: { 0 }),
            Defaults.Key<String?>("c\(id)", suite: suite, iCloud: true),
        ]
        #expect(Set(keys).isSubset(of: Defaults.iCloud.keys))
        Defaults.iCloud.remove(keys)
        #expect(Set(keys).isDisjoint(with: Defaults.iCloud.keys))
        // Without `iCloud: true`, nothing is synced.
        let plain = Defaults.Key<Int>("d\(id)", default: 0, suite: suite)
        #expect(!Defaults.iCloud.keys.contains(plain))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: SyncProcess.helperPath)))
    func theLogSaysOnceThatNothingSyncs() async throws {
        let directory = try TemporaryDirectory()
        let machine = try await SyncProcess(
            configDirectory: directory.url, url: nil, namespace: "unused", keys: ["first", "second"])
        try await machine.set("first", "1")
        try await machine.set("second", "2")
        #expect(try await machine.get("first") == "1")
        try await machine.send("wait", answer: "ok")
        try await machine.quit()
        #expect(machine.log.components(separatedBy: "nothing syncs").count == 2, "\(machine.log)")
    }
}

@Suite("PostgreSQL store configuration", .mayBlock)
struct PostgresConfigurationTests {
    @Test func theDescriptionNeverHoldsThePassword() throws {
        let store = try PostgresSyncStore(
            url: "postgres://app:s3cr%40t@db.example:6543/settings", namespace: "com.example")
        #expect(!store.description.contains("s3cr"))
        #expect(store.description.contains("db.example:6543/settings"))
        let configuration = try PostgresSyncStore.configuration(url: "postgresql://app:s3cr%40t@db.example/settings")
        #expect(configuration.password == "s3cr@t")
        #expect(configuration.port == 5432)
    }

    @Test func badInputIsRefusedClearly() {
        let cases: [(String, String)] = [
            ("http://app@host/db", "must look like"),
            ("postgres://host/db", "names no user"),
            ("postgres://app:pw@/db", "names no host"),
            ("postgres://app:pw@host/db?sslmode=sometimes", "sslmode"),
        ]
        for (url, message) in cases {
            #expect {
                try PostgresSyncStore(url: url, namespace: "n")
            } throws: { error in
                "\(error)".contains(message) && !"\(error)".contains("pw")
            }
        }
        #expect(throws: PostgresSyncError.self) { try PostgresSyncStore(url: "postgres://a@h/d", namespace: "") }
    }

    @Test func aUnixSocketDirectoryIsUsed() throws {
        let configuration = try PostgresSyncStore.configuration(url: "postgres://app@localhost:5433/db?host=/run/pg")
        #expect(configuration.unixSocketPath == "/run/pg/.s.PGSQL.5433")
    }
}
