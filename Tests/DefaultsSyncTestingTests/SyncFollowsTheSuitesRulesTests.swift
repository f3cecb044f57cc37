import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// The suite's rules of sync, shown between a machine (`DefaultsSyncTestingHelper`, a program
/// whose keys are lazy `static let`s: `theme`, default `light`, and `accent`, default `blue`) and
/// another machine (the helper's peer, pushing through the same in-memory server). A machine run
/// twice is two processes in one directory.
///
/// 1. A key's registered default is never pushed, and a value written offline before a newer
///    write elsewhere never goes over it.
/// 2. A key the administrator manages is neither pushed from that machine nor overwritten there;
///    the remote value waits beneath the managed one.
/// 3. A change kept in the journal is pushed once the store is connected, whether or not the
///    program has touched its key since it started; waiting for sync waits for it.
/// 4. A remote value the local key cannot read is kept aside, reported, never applied and never
///    answered (what `UnreadableRemoteValueTests` does not cover: a key holding its default, the
///    catch-up paths, a local value written offline).
@Suite(.enabled(if: RuleMachine.isAvailable, "the helper is built with the tests"), .mayBlock)
struct SyncFollowsTheSuitesRulesTests {
    // MARK: 1. A registered default is never pushed; an older offline write never wins

    @Test(
        "A machine joining later ends with the other machine's newest value, and never pushes its default",
        arguments: [false, true])
    func joiningMachineTakesTheNewestValue(readsTheKeyBeforeConnecting: Bool) async throws {
        let directory = try MachineDirectory()
        let machine = try await RuleMachine(in: directory, offline: readsTheKeyBeforeConnecting)
        if readsTheKeyBeforeConnecting {
            // The program shows its setting before the store is reachable: its default.
            #expect(try await machine.get("theme") == "light")
        } else {
            _ = try await machine.waitForSync()
        }
        // The other machine sets the theme; this one never wrote it.
        try await machine.send("peer-set theme dark")
        if readsTheKeyBeforeConnecting {
            try await machine.send("reconnect")
        } else {
            // The program reads its setting for the first time: the lazy key is declared now.
            _ = try await machine.get("theme")
        }
        try await machine.waitUntil("the other machine's value to be read here") {
            try await machine.get("theme") == "dark"
        }
        // A key no machine wrote reads its default, which is not pushed either.
        #expect(try await machine.get("accent") == "blue")
        _ = try await machine.waitForSync()

        #expect(try await machine.get("theme") == "dark")
        #expect(try await machine.onServer("theme") == "dark")
        #expect(try await machine.serverOrigin("theme") == "peer", "the store holds the other machine's record")
        #expect(try await machine.received("theme") == "(none)", "this machine stored nothing of the key")
        #expect(try await machine.onServer("accent") == "(none)", "a default is not pushed")
        #expect(try await machine.journalPending() == 0)
        try await machine.quit()
    }

    @Test("A value written offline before a newer write elsewhere is not pushed over it (one process)")
    func olderOfflineWriteLosesInOneProcess() async throws {
        let directory = try MachineDirectory()
        let machine = try await RuleMachine(in: directory)
        try await machine.set("theme", "blue")
        _ = try await machine.waitForSync()
        try await machine.waitUntil("the other machine to receive the first value") {
            try await machine.received("theme") == "blue"
        }

        try await machine.send("disconnect")
        try await machine.set("theme", "green")
        // Let the wall clock move on, so that the other machine's write is the newer by any clock.
        try await Task.sleep(for: .milliseconds(50))
        try await machine.send("peer-set theme dark")
        try await machine.send("reconnect")
        _ = try await machine.waitForSync()

        #expect(try await machine.get("theme") == "dark")
        #expect(try await machine.onServer("theme") == "dark")
        #expect(try await machine.serverOrigin("theme") == "peer")
        #expect(try await machine.received("theme") == "blue", "the offline value was never stored")
        #expect(try await machine.journalPending() == 0)
        try await machine.quit()
    }

    @Test("A value written offline in an earlier run, before a newer write elsewhere, is not pushed over it")
    func olderOfflineWriteLosesAcrossProcesses() async throws {
        let directory = try MachineDirectory()
        // The first run never reaches the store.
        let first = try await RuleMachine(in: directory, offline: true)
        try await first.set("theme", "green")
        #expect(try await first.journalPending() == 1)
        try await first.quit()

        try await Task.sleep(for: .milliseconds(50))
        let second = try await RuleMachine(in: directory, offline: true)
        try await second.send("peer-set theme dark")
        #expect(try await second.get("theme") == "green")
        try await second.send("reconnect")
        _ = try await second.waitForSync()

        #expect(try await second.get("theme") == "dark")
        #expect(try await second.onServer("theme") == "dark")
        #expect(try await second.serverOrigin("theme") == "peer")
        #expect(try await second.received("theme") == "(none)", "the offline value was never stored")
        #expect(try await second.journalPending() == 0)
        try await second.quit()
    }

    // MARK: 2. A managed key is neither pushed nor overwritten; the remote value waits beneath

    @Test("A key managed from the start: never pushed, keeps the managed value, reads the remote one when freed")
    func managedKeyFromTheStart() async throws {
        let directory = try MachineDirectory()
        try directory.writeManaged(["theme": "corporate"])
        let machine = try await RuleMachine(in: directory, managed: true)
        #expect(try await machine.get("theme") == "corporate")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("theme") == "(none)", "the managed value is not pushed")

        // The program tries to change it: refused, reported, nothing pushed.
        try await machine.set("theme", "mine")
        #expect(try await machine.problems().contains("managedKey:theme"))
        _ = try await machine.waitForSync()
        #expect(try await machine.get("theme") == "corporate")
        #expect(try await machine.onServer("theme") == "(none)")

        try await expectRemoteValueWaitsBeneath(machine, directory: directory)
        try await machine.quit()
    }

    @Test("A synced key that becomes managed: the managed value is not pushed, the remote one waits beneath")
    func keyBecomingManaged() async throws {
        let directory = try MachineDirectory()
        try directory.makeManagedDirectory()
        let machine = try await RuleMachine(in: directory, managed: true)
        try await machine.set("theme", "mine")
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("theme") == "mine")
        let ownOrigin = try await machine.serverOrigin("theme")

        try directory.writeManaged(["theme": "corporate"])
        try await machine.waitUntil("the managed value to be read") {
            try await machine.get("theme") == "corporate"
        }
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("theme") == "mine", "the managed value is not pushed")
        #expect(try await machine.serverOrigin("theme") == ownOrigin)

        try await expectRemoteValueWaitsBeneath(machine, directory: directory)
        try await machine.quit()
    }

    @Test("A change made before the key became managed is not pushed while it is managed")
    func changeBeneathAManagedKeyIsNotPushed() async throws {
        let directory = try MachineDirectory()
        // The user's own change, made offline and kept in the journal.
        let first = try await RuleMachine(in: directory, offline: true, managed: true)
        try await first.set("theme", "mine")
        #expect(try await first.journalPending() == 1)
        try await first.quit()

        // Then the administrator manages the key.
        try directory.writeManaged(["theme": "corporate"])
        let second = try await RuleMachine(in: directory, managed: true)
        #expect(try await second.get("theme") == "corporate")
        // Another setting changes, and reaches the store: every push since holds the theme's
        // change too, were it pushed (a push takes every pending change).
        try await second.set("accent", "green")
        try await second.waitUntil("the other setting to reach the store") {
            try await second.onServer("accent") == "green"
        }
        let onServer = try await second.onServer("theme")
        #expect(onServer == "(none)", "the value beneath the managed one is not pushed")
        let received = try await second.received("theme")
        #expect(received == "(none)")
        #expect(try await second.get("theme") == "corporate")
        // Nothing is pending, by the engine's status and by the journal's summary alike: the
        // change waits for the key to stop being managed, and is counted as such.
        #expect(try await second.status().contains(" pending=0 "))
        #expect(try await second.journalPending() == 0, "the summary counts the managed key's change as pending")
        #expect(try await second.send("journal", answer: "journal").contains(" managed=1 "))
        try await second.quit()
    }

    /// The other machine writes the managed key: the program goes on reading the managed value,
    /// the remote one is stored beneath it (in the user's file) and nothing is pushed over it;
    /// once the administrator stops managing the key, it reads the remote value.
    private func expectRemoteValueWaitsBeneath(
        _ machine: RuleMachine, directory: MachineDirectory, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await machine.send("peer-set theme dark")
        try await machine.waitUntil("the remote value to be kept in the user's file") {
            try await machine.send("flush")
            return try directory.storedValue("theme") == .string("dark")
        }
        #expect(try await machine.get("theme") == "corporate", sourceLocation: sourceLocation)
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("theme") == "dark", sourceLocation: sourceLocation)
        #expect(try await machine.serverOrigin("theme") == "peer", sourceLocation: sourceLocation)
        #expect(try await machine.received("theme") != "corporate", sourceLocation: sourceLocation)

        try directory.removeManaged()
        try await machine.waitUntil("the remote value to be read once the key is no longer managed") {
            try await machine.get("theme") == "dark"
        }
        _ = try await machine.waitForSync()
        #expect(try await machine.onServer("theme") == "dark", sourceLocation: sourceLocation)
        #expect(try await machine.serverOrigin("theme") == "peer", sourceLocation: sourceLocation)
        #expect(try await machine.journalPending() == 0, sourceLocation: sourceLocation)
    }

    // MARK: 3. A change kept in the journal is pushed once connected

    /// How the first run failed to push.
    enum Unpushed: String, CustomTestStringConvertible, CaseIterable {
        case storeUnreachable, pushesFailing
        var testDescription: String { rawValue }
    }

    @Test(
        "A change kept in the journal is pushed by a run that declares no key, and waited for",
        arguments: Unpushed.allCases)
    func journalPushedWithNoKeyDeclared(unpushed: Unpushed) async throws {
        let directory = try MachineDirectory()
        try await writeUnpushed(in: directory, unpushed)

        // The next run connects and never reads or declares a key.
        let second = try await RuleMachine(in: directory)
        try await expectJournalPushed(second)
    }

    @Test(
        "A change kept in the journal is pushed by a run that uses another key of the suite, and waited for",
        arguments: Unpushed.allCases)
    func journalPushedWithAnotherKeyDeclared(unpushed: Unpushed) async throws {
        let directory = try MachineDirectory()
        try await writeUnpushed(in: directory, unpushed)

        // The next run reads another setting of the suite, never the theme.
        let second = try await RuleMachine(in: directory)
        #expect(try await second.get("accent") == "blue")
        try await expectJournalPushed(second)
    }

    /// A first run writes the theme and exits without it reaching the store: the journal keeps it.
    private func writeUnpushed(in directory: MachineDirectory, _ unpushed: Unpushed) async throws {
        let first = try await RuleMachine(in: directory, offline: unpushed == .storeUnreachable)
        if unpushed == .pushesFailing {
            _ = try await first.waitForSync()
            try await first.send("fail-pushes 1000000")
        }
        try await first.set("theme", "dark")
        try await first.waitUntil("the change to be recorded") {
            try await first.status().contains(" pending=1 ")
        }
        #expect(try await first.journalPending() == 1)
        if unpushed == .pushesFailing {
            #expect(try await first.onServer("theme") == "(none)")
        }
        try await first.quit()
        #expect(directory.journalEntryIsPending("theme") == true)
    }

    /// Waiting for sync returns only once the journal holds nothing pending, and the other machine
    /// then has the value.
    private func expectJournalPushed(
        _ machine: RuleMachine, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let status = try await machine.waitForSync()
        #expect(try await machine.onServer("theme") == "dark", sourceLocation: sourceLocation)
        try #require(
            try await machine.journalPending() == 0, "waiting returned (\(status)) with the journal pending",
            sourceLocation: sourceLocation)
        try await machine.waitUntil("the other machine to receive the value") {
            try await machine.received("theme") == "dark"
        }
        #expect(try await machine.get("theme") == "dark", sourceLocation: sourceLocation)
        try await machine.quit()
    }

    // MARK: 4. An unreadable remote value is kept aside

    @Test(
        "A value of another type for a key holding its default is kept aside at catch-up, never applied or answered",
        arguments: [false, true])
    func unreadableValueOverTheDefault(declaredBeforeConnecting: Bool) async throws {
        let directory = try MachineDirectory()
        let machine = try await RuleMachine(in: directory, offline: declaredBeforeConnecting)
        if declaredBeforeConnecting {
            #expect(try await machine.get("theme") == "light")
        } else {
            _ = try await machine.waitForSync()
        }
        // Another version of the program stores the theme as a number.
        try await machine.send("peer-set-integer theme 3")
        if declaredBeforeConnecting {
            try await machine.send("reconnect")  // the first connection's catch-up
        } else {
            _ = try await machine.get("theme")  // the lazily declared key's catch-up
        }
        try await machine.waitUntil("the value to be kept aside") {
            try await machine.status().contains(" aside=theme ")
        }
        #expect(try await machine.get("theme") == "light", "the default stays")
        #expect(try await machine.problems().contains("wrongType:theme"))
        let status = try await machine.waitForSync()
        #expect(status.contains(" aside=theme "), "\(status)")
        #expect(try await machine.value("peer-get-integer", "theme", answer: "peer") == "3")
        #expect(try await machine.serverOrigin("theme") == "peer")
        #expect(try await machine.received("theme") == "(none)", "nothing answered")
        #expect(try await machine.journalPending() == 0)
        #expect(try await machine.get("theme") == "light")
        try await machine.quit()
    }

    @Test("A value of another type newer than a local value written offline: the local value stays, not pushed over it")
    func unreadableValueOverAnOfflineWrite() async throws {
        let directory = try MachineDirectory()
        let machine = try await RuleMachine(in: directory)
        try await machine.set("theme", "blue")
        _ = try await machine.waitForSync()
        try await machine.waitUntil("the other machine to receive the first value") {
            try await machine.received("theme") == "blue"
        }

        try await machine.send("disconnect")
        try await machine.set("theme", "green")
        // Let the wall clock move on, so that the other machine's write is the newer by any clock.
        try await Task.sleep(for: .milliseconds(50))
        try await machine.send("peer-set-integer theme 3")
        try await machine.send("reconnect")
        try await machine.waitUntil("the value to be kept aside") {
            try await machine.status().contains(" aside=theme ")
        }
        #expect(try await machine.get("theme") == "green", "the local value stays")
        #expect(try await machine.problems().contains("wrongType:theme"))
        _ = try await machine.waitForSync()
        #expect(try await machine.value("peer-get-integer", "theme", answer: "peer") == "3")
        #expect(try await machine.serverOrigin("theme") == "peer")
        #expect(try await machine.received("theme") == "blue", "the older local value was never stored")
        #expect(try await machine.get("theme") == "green")
        try await machine.quit()
    }
}

// MARK: - Machines

/// One machine's directory (`XDG_CONFIG_HOME`), kept across the runs of its program, with an
/// administrator's directory (`XDG_CONFIG_DIRS`) beside it; removed when the test ends.
private final class MachineDirectory: Sendable {
    static let suiteName = "sync-testing-helper"

    let url: URL
    let user: URL
    let administrator: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sync-rules-\(UUID().uuidString)", isDirectory: true)
        user = url.appendingPathComponent("config", isDirectory: true)
        administrator = url.appendingPathComponent("xdg", isDirectory: true)
        try FileManager.default.createDirectory(at: user, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: administrator, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    var managedDirectory: URL { administrator.appendingPathComponent("managed", isDirectory: true) }
    var managedFile: URL { managedDirectory.appendingPathComponent(Self.suiteName + ".plist") }

    func makeManagedDirectory() throws {
        try FileManager.default.createDirectory(at: managedDirectory, withIntermediateDirectories: true)
    }

    /// Writes the managed file as an administrator's tool would: a new file renamed into place,
    /// writable by its owner only.
    func writeManaged(_ values: [String: Any]) throws {
        try makeManagedDirectory()
        let temporary = managedDirectory.appendingPathComponent(".new-\(UUID().uuidString)")
        try PropertyList.encodeXML(values).write(to: temporary)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: temporary.path)
        guard rename(temporary.path, managedFile.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: managedFile.path])
        }
    }

    func removeManaged() throws {
        try FileManager.default.removeItem(at: managedFile)
    }

    /// The value of `key` in the user's file of the suite, as on disk.
    func storedValue(_ key: String) throws -> PropertyListValue? {
        let file = user.appendingPathComponent(Self.suiteName + ".plist")
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        guard case .dictionary(let values) = try PropertyList.decodeValue(data) else { return nil }
        return values[key]
    }

    /// Whether the journal on disk holds `key`'s change as pending; `nil` when it has no entry.
    func journalEntryIsPending(_ key: String) -> Bool? {
        let file = user.appendingPathComponent(".defaults-sync", isDirectory: true)
            .appendingPathComponent(Self.suiteName + ".plist")
        guard let data = FileManager.default.contents(atPath: file.path),
            case .dictionary(let values)? = try? PropertyList.decodeValue(data),
            case .dictionary(let entry)? = values[key], case .boolean(let isPending)? = entry["pending"]
        else { return nil }
        return isPending
    }
}

/// One run of the helper program in a machine's directory; see Tests/SyncTestingHelper/main.swift.
private final class RuleMachine: HelperProcess {
    let child: ChildProcess

    /// - Parameters:
    ///   - offline: no store is reachable until `reconnect`.
    ///   - managed: the administrator's directory of `directory` is the machine's (`XDG_CONFIG_DIRS`).
    init(in directory: MachineDirectory, offline: Bool = false, managed: Bool = false) async throws {
        var environment = ["XDG_CONFIG_HOME": directory.user.path]
        // No administrator's file of the test machine's own.
        environment["XDG_CONFIG_DIRS"] = managed ? directory.administrator.path : directory.url.path
        child = try ChildProcess(
            Self.helperPath, offline ? ["--offline", "yes"] : [], environment: environment, input: .pipe)
        _ = try await child.line { $0 == "ready" }
    }

    /// What the program reads of its key `key`.
    func get(_ key: String) async throws -> String { try await value("declared-get", key, answer: "value") }
    func set(_ key: String, _ value: String) async throws { try await send("declared-set \(key) \(value)") }
    /// What the other machine reads of `key` on the server.
    func onServer(_ key: String) async throws -> String { try await value("peer-get", key, answer: "peer") }
    /// Who stored the server's record of `key`: `peer` for the other machine.
    func serverOrigin(_ key: String) async throws -> String {
        try await value("server-origin", key, answer: "origin")
    }
    /// The last value of `key` this machine's pushes delivered to the other machine.
    func received(_ key: String) async throws -> String { try await value("received", key, answer: "received") }
    func status() async throws -> String { try await send("status", answer: "status") + " " }
    func problems() async throws -> String { try await send("problems", answer: "problems") }

    /// The pending changes the journal summary counts, read from disk.
    func journalPending() async throws -> Int? {
        let line = try await send("journal", answer: "journal pending=")
        return Int(line.dropFirst("journal pending=".count).prefix { $0.isNumber })
    }

    /// Waits until `Defaults.iCloud.waitForSyncCompletion` says syncing is done, and returns the
    /// status line (with a trailing space).
    func waitForSync() async throws -> String {
        var status = ""
        try await waitUntil("sync to complete: \(status)") {
            status = try await send("wait-at-most 5", answer: "status") + " "
            return status.contains("connected=true pending=0 ")
        }
        return status
    }

    /// Quits the program (flushing every suite) and waits for it to exit.
    func quit() async throws {
        try await send("quit")
        let termination = try await child.wait()
        #expect(termination == .exited(0), "\(termination)")
    }
}
