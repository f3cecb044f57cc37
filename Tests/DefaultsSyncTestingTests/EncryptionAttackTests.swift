import Defaults
import DefaultsSyncEncryption
import DefaultsSyncTesting
import Foundation
import TestSupport
import Testing

/// End-to-end encryption against a hostile server (finding 7 of issue 29): each attack a server
/// or a token holder without the passphrase can make is detected, reported, and nothing it made
/// is handed to the library. Devices are `EncryptedSyncStore`s on one in-memory server, driven
/// as the library drives a store.
@Suite(.mayBlock)
struct EncryptionAttackTests {
    static let passphrase = "correct horse battery staple"

    /// A device: an encrypted store on `server`, running, remembering heads in `directory`. With
    /// `isWatching` false, only the store it wraps runs: it pushes and fetches, but never looks at
    /// what is delivered.
    static func device(
        _ name: String, on server: InMemorySyncServer, directory: URL?, passphrase: String = passphrase,
        isWatching: Bool = true
    ) async throws -> (store: EncryptedSyncStore, running: RunningStore) {
        let wrapped = InMemorySyncStore(server: server, name: name)
        let store = try EncryptedSyncStore(
            wrapped, passphrase: passphrase, namespace: "app", stateDirectory: directory)
        let running = RunningStore(isWatching ? store : wrapped)
        try await running.waitUntilConnected()
        return (store, running)
    }

    static func value(_ text: String, at wallTime: Int64, origin: String = "a") -> SyncRecord {
        SyncRecord(
            key: "diary", value: Data(text.utf8),
            timestamp: SyncTimestamp(wallTime: wallTime, counter: 0, origin: origin))
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "e2e-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Removes `directory` once the heads remembered in it are written (its devices stopped):
    /// written later, they would make it again.
    static func remove(_ directory: URL) {
        _ = try? Defaults.flushAll()
        try? FileManager.default.removeItem(at: directory)
    }

    static func rollbacks(_ store: EncryptedSyncStore) -> [EndToEndError] {
        store.detectedTampering.filter { if case .rolledBack = $0 { true } else { false } }
    }

    @Test func anOlderSealedRecordPutBackIsRefusedByANewDeviceAndRepairedByTheOneThatSawTheNewer() async throws {
        let server = InMemorySyncServer()
        let directory = try Self.temporaryDirectory()
        defer { Self.remove(directory) }
        let (first, firstRunning) = try await Self.device("first", on: server, directory: directory)
        defer { firstRunning.stop() }  // before the directory goes
        try await first.push([Self.value("old", at: 10)])
        let old = try #require(server.record(forKey: first.storedName(forKey: "diary")))
        try await first.push([Self.value("new", at: 20)])

        // Someone with the database puts the older sealed record back, version and all.
        server.overwrite([old])

        // A new device takes nothing of it: the head says the store held a later version.
        let (newcomer, newcomerRunning) = try await Self.device("new", on: server, directory: nil)
        #expect(try await newcomer.timestamps()["diary"] == old.timestamp, "the store's version, as it is")
        #expect(try await newcomer.records(forKeys: ["diary"]).isEmpty, "the rolled-back record is refused")
        try await waitUntil("the new device to report the rollback") { !Self.rollbacks(newcomer).isEmpty }
        #expect("\(Self.rollbacks(newcomer)[0])".contains("diary"))

        // The first device was delivered the older record: refused, reported, and it asks the
        // library for a catch-up in full (which pushes the newer value it holds again).
        try await waitUntil("the first device to report the rollback") { !Self.rollbacks(first).isEmpty }
        try await firstRunning.waitUntil("a reconnection that makes the library catch up") { events in
            events.filter { $0 == .connected }.count == 2
        }
        #expect(firstRunning.disconnections.contains { $0.contains("rollback") })
        #expect(!firstRunning.received.contains { $0.key == "diary" }, "the older value was never handed over")
        #expect(try await first.changesSinceLastConnection() == nil, "a catch-up in full")
        // The library pushes the newer value again (with its version): every device converges.
        try await first.push([Self.value("new", at: 20)])
        try await newcomerRunning.waitUntil("the new device to receive the newer value") { _ in
            newcomerRunning.received.contains { $0.key == "diary" && $0.value == Data("new".utf8) }
        }
        #expect(try await newcomer.records(forKeys: ["diary"]).map(\.value) == [Data("new".utf8)])
    }

    @Test func anUnsealedRemovalIsRefusedAndReported() async throws {
        let server = InMemorySyncServer()
        let (a, _) = try await Self.device("a", on: server, directory: nil)
        let (b, bRunning) = try await Self.device("b", on: server, directory: nil)
        try await a.push([Self.value("kept", at: 10)])
        try await bRunning.waitUntil("b to receive the value") { _ in bRunning.received.count == 1 }

        // A token holder without the passphrase removes the key: a record with no value, later.
        let attacker = RunningStore(InMemorySyncStore(server: server, name: "attacker"))
        try await attacker.waitUntilConnected()
        let stored = a.storedName(forKey: "diary")
        try await attacker.store.push([
            SyncRecord(key: stored, value: nil, timestamp: .init(wallTime: 11, counter: 0, origin: "x"))
        ])

        try await waitUntil("b to report the tampering") {
            b.detectedTampering.contains { if case .recordTampered = $0 { true } else { false } }
        }
        #expect(bRunning.received.count == 1, "the removal was never handed over")
        #expect(try await b.records(forKeys: ["diary"]).isEmpty)
        #expect(try await b.timestamps()["diary"] == .init(wallTime: 11, counter: 0, origin: "x"))
    }

    @Test func aRemovedCheckRecordIsReportedAsTamperingAndSealedAgain() async throws {
        let server = InMemorySyncServer()
        // Not watching: it leaves the removal to the new device.
        let (a, _) = try await Self.device("a", on: server, directory: nil, isWatching: false)
        try await a.push([Self.value("v", at: 10)])
        let check = "e2e1.check"
        let attacker = RunningStore(InMemorySyncStore(server: server, name: "attacker"))
        try await attacker.waitUntilConnected()
        /// A token holder without the passphrase pushes a removal of the check record.
        func removeCheck() async throws {
            let held = try #require(server.record(forKey: check))
            let later = SyncTimestamp(
                wallTime: held.timestamp.wallTime, counter: held.timestamp.counter + 1, origin: "x")
            try await attacker.store.push([SyncRecord(key: check, value: nil, timestamp: later)])
        }
        try await removeCheck()

        // A new device with the right passphrase: the head confirms it, so this is tampering,
        // not a wrong passphrase, and it syncs.
        let (newcomer, _) = try await Self.device("new", on: server, directory: nil)
        #expect(try await newcomer.records(forKeys: ["diary"]).map(\.value) == [Data("v".utf8)])
        #expect(newcomer.detectedTampering == [.checkRecordTampered(namespace: "app")])
        #expect(server.record(forKey: check)?.value != nil, "sealed again")

        // Removed again while it watches: it seals it again at once.
        try await removeCheck()
        try await waitUntil("the check record to be sealed again") { server.record(forKey: check)?.value != nil }

        // A wrong passphrase is still told as one.
        let (wrong, _) = try await Self.device("wrong", on: server, directory: nil, passphrase: "another")
        await #expect(throws: EndToEndError.wrongPassphrase(namespace: "app")) { _ = try await wrong.timestamps() }
    }

    @Test func aCheckRecordRemovedWithNothingToConfirmThePassphraseStopsSyncing() async throws {
        let server = InMemorySyncServer()
        // Data of another passphrase, and its check record removed by a token holder.
        let (other, _) = try await Self.device(
            "other", on: server, directory: nil, passphrase: "another", isWatching: false)
        try await other.push([Self.value("v", at: 10)])
        server.overwrite([
            SyncRecord(key: "e2e1.check", value: nil, timestamp: .init(wallTime: 99, counter: 0, origin: "x"))
        ])

        let (device, _) = try await Self.device("device", on: server, directory: nil)
        await #expect(throws: EndToEndError.checkRecordRemoved(namespace: "app")) { _ = try await device.timestamps() }
        await #expect(throws: EndToEndError.checkRecordRemoved(namespace: "app")) {
            try await device.push([Self.value("mine", at: 50)])
        }
        #expect(server.records.count == 3, "check, head, other's record, and nothing of this device's")
    }

    @Test func aNamespaceRolledBackWholeIsNoticedOnlyByADeviceThatSawALaterHead() async throws {
        let server = InMemorySyncServer()
        let directory = try Self.temporaryDirectory()
        defer { Self.remove(directory) }
        var snapshotHead: SyncTimestamp?
        do {
            let (first, running) = try await Self.device("first", on: server, directory: directory)
            try await first.push([Self.value("old", at: 10)])
            let snapshot = server.records
            try await first.push([Self.value("new", at: 20)])
            snapshotHead = server.record(forKey: "e2e1.head")?.timestamp
            running.stop()
            // The remembered head on disk, as at a process's exit. Every suite of this process is
            // flushed even when another test's fails (one whose file is a directory, on purpose):
            // this one's failure would show below, as a restarted device that remembers nothing.
            _ = try? Defaults.flushAll()
            // The whole namespace put back as it was, the head included: consistent.
            server.overwrite(Array(snapshot.values))
        }

        // A device that never saw the later head cannot tell: this is what the server can still do.
        let (stranger, _) = try await Self.device("stranger", on: server, directory: nil)
        #expect(try await stranger.records(forKeys: ["diary"]).map(\.value) == [Data("old".utf8)])
        #expect(stranger.detectedTampering.isEmpty)

        // The first device, restarted, remembers the later head: the older one is refused.
        let (restarted, running) = try await Self.device("first", on: server, directory: directory)
        defer { running.stop() }  // before the directory goes
        #expect(try await restarted.records(forKeys: ["diary"]).isEmpty, "older than the head it saw")
        try await waitUntil("the restarted device to report the rollback") { Self.rollbacks(restarted).count >= 1 }
        try await running.waitUntilConnected(times: 2)
        // The library pushes the newer value again; the head goes past the one it remembered.
        let remembered = try #require(snapshotHead)
        try await restarted.push([Self.value("new", at: 20)])
        #expect(try #require(server.record(forKey: "e2e1.head")).timestamp > remembered)
        #expect(try await stranger.records(forKeys: ["diary"]).map(\.value) == [Data("new".utf8)])
    }

    /// A passphrase turned on over records stored in clear: they are not read (a token holder
    /// could have written them, backdated), the refusal is logged once however many catch-ups,
    /// and the device's own values go out sealed.
    @Test func recordsInClearAreRefusedAndToldOfOnce() async throws {
        let server = InMemorySyncServer()
        let namespace = "clear-\(UUID().uuidString.prefix(8))"
        server.overwrite([
            SyncRecord(key: "theme", value: Data("dark".utf8), timestamp: .init(wallTime: 5, counter: 0, origin: "x"))
        ])
        let wrapped = InMemorySyncStore(server: server, name: "device")
        let device = try EncryptedSyncStore(
            wrapped, passphrase: Self.passphrase, namespace: namespace, stateDirectory: nil)
        let running = RunningStore(device)
        try await running.waitUntilConnected()
        for _ in 0..<3 {
            #expect(try await device.timestamps()["theme"] == nil)
            #expect(try await device.records(forKeys: ["theme"]).isEmpty)
        }
        let warnings = CapturedLogs.lines.filter {
            $0.contains("A record in clear was refused") && $0.contains(namespace)
        }
        #expect(warnings.count == 1, "\(warnings)")
        try await device.push([Self.value("sealed", at: 10)])
        #expect(server.records.keys.allSatisfy { $0 == "theme" || $0.hasPrefix("e2e1.") })
        running.stop()
    }

    @Test func recordsSealedBeforeTheHeadExistedStillOpen() async throws {
        let server = InMemorySyncServer()
        let (a, _) = try await Self.device("a", on: server, directory: nil)
        try await a.push([Self.value("from-an-older-version", at: 10)])
        // A namespace written by a version without heads: no head record.
        server.removeRecords(forKeys: ["e2e1.head"])
        let (b, _) = try await Self.device("b", on: server, directory: nil)
        #expect(try await b.records(forKeys: ["diary"]).map(\.value) == [Data("from-an-older-version".utf8)])
        #expect(b.detectedTampering.isEmpty)
        try await b.push([Self.value("newer", at: 20)])
        #expect(server.record(forKey: "e2e1.head") != nil, "the first push of this version adds the head")
    }
}
