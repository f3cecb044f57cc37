import Defaults
import Foundation
import Logging
import Synchronization

/// A sync store that encrypts end to end: every value is sealed with AES-256-GCM and every key's
/// name replaced by a keyed hash before it reaches the store it wraps, so that neither the server
/// nor whoever reads its database learns a name or a value, and neither can forge, move or roll
/// back a value without a device with the passphrase noticing.
///
/// ```swift
/// import Defaults
/// import DefaultsPostgres
/// import DefaultsSyncEncryption
///
/// let store = try PostgresSyncStore(url: "postgres://user@host:5432/db", namespace: "com.example.app")
/// Defaults.iCloud.use(try EncryptedSyncStore(store, passphrase: passphrase, namespace: "com.example.app"))
/// ```
///
/// - The keys are derived from the passphrase with scrypt, salted with the namespace; every
///   machine of the namespace must be given the same passphrase.
/// - A machine given another passphrase reads nothing and writes nothing: the namespace holds a
///   check record sealed by the first machine, and a machine that cannot open it reports
///   ``EndToEndError/wrongPassphrase(namespace:)`` (in `Defaults.iCloud.status.lastError` and the
///   log) on every call, while its keys go on working locally.
/// - Versions (hybrid-logical-clock timestamps) stay readable, as the store needs them to keep
///   the later of two records; each is sealed with its value and its key, so the store can
///   neither move a value to another key or version nor pass off a removal as one of the user's.
/// - Every push also advances the namespace's head, a sealed record of each key's latest
///   version, which each device remembers (``init(_:passphrase:namespace:stateDirectory:)``): a
///   record older than a head the device has seen, or a head older than the newest it has seen,
///   was rolled back; it is refused and reported, and the device pushes the newer values it holds.
///
/// What a device found is logged at error level and listed in ``detectedTampering``.
public final class EncryptedSyncStore: DefaultsSyncStore {
    public let description: String
    /// The namespace whose data this store seals (its salt).
    public let namespace: String

    let store: any DefaultsSyncStore
    let keys: EndToEndKeys
    let memory: HeadMemory
    /// The origin of the heads this device pushes: random, so that two devices' heads never tie.
    let headOrigin = "e2e-" + UUID().uuidString.prefix(8).lowercased()
    let logger = Logger(label: "swift-defaults.encryption")

    struct State {
        /// Clear names of the stored names this machine wrote, asked for or opened.
        var names: [String: String] = [:]
        /// Records in clear (from before the passphrase, or written by someone without it) met
        /// so far: each is refused, and told of once.
        var clearRecords: Set<String> = []
        /// Whether the namespace's check record (or another record) opened with this passphrase.
        var isVerified = false
        /// The latest version of each key's record this device knows the store holds: its own
        /// pushes, what it received, and the claims of every head it opened.
        var known = NamespaceHead()
        /// The newest head this device has seen or pushed.
        var headVersion: SyncTimestamp?
        /// Stored names to look at again (a record older than `known`), and whether the check
        /// record must be looked at again; see ``checkSuspects(reporting:)``.
        var suspects: Set<String> = []
        var isCheckSuspect = false
        /// Wakes the running ``run(reporting:)``'s checker.
        var wakeChecker: AsyncStream<Void>.Continuation?
        /// Whether the wrapped store is connected now.
        var isConnected = false
        /// A rollback was found: the next ``changesSinceLastConnection()`` answers `nil`, so that the
        /// library catches up in full and pushes the newer values it holds.
        var mustCatchUpInFull = false
        /// The store's head was found rolled back: the next push pushes a head, even when it
        /// claims nothing new.
        var mustPushHead = false
        var detectedTampering: [EndToEndError] = []
    }

    let state = Mutex(State())

    /// Wraps `store`, deriving the keys from `passphrase` (about a tenth of a second).
    ///
    /// - Parameters:
    ///   - store: The store the sealed records go to, for example a `PostgresSyncStore`.
    ///   - passphrase: The secret every machine of the namespace shares; never sent anywhere.
    ///   - namespace: The namespace the data belongs to, the salt of the keys.
    ///   - stateDirectory: Where this device remembers the newest head of the namespace it has
    ///     seen, in `.defaults-sync/` (a file named by a hash of the keys): by default the
    ///     directory the suites' files are in, where the sync journals are. `nil` remembers it in
    ///     memory only: a restarted device then no longer refuses a namespace rolled back to
    ///     before its restart (a record older than one it has in its journal is still never applied).
    /// - Throws: ``EndToEndError`` for an empty passphrase.
    public init(
        _ store: any DefaultsSyncStore, passphrase: String, namespace: String,
        stateDirectory: URL? = FileSuite.defaultDirectory
    ) throws {
        guard !passphrase.isEmpty else { throw EndToEndError.emptyPassphrase }
        self.store = store
        self.namespace = namespace
        keys = try EndToEndKeys(passphrase: passphrase, namespace: namespace)
        description = "\(store.description), end-to-end encrypted"
        memory = HeadMemory(directory: stateDirectory, id: keys.stateID)
        if let remembered = memory.load() {
            state.withLock { state in
                state.known = remembered.head
                state.headVersion = remembered.version
            }
        }
    }

    /// What this device found the store did that only someone without the passphrase, or with
    /// access to the store's database, could do; each is also logged once, at error level.
    public var detectedTampering: [EndToEndError] {
        state.withLock { $0.detectedTampering }
    }

    // MARK: DefaultsSyncStore

    public func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        state.withLock { $0.wakeChecker = wake }
        await withTaskGroup(of: Void.self) { group in
            // Looks at suspect records again, with calls of its own: never from inside the wrapped
            // store's report, which some stores (the sync service's) call from their reading loop.
            group.addTask {
                for await _ in wakes {
                    await self.checkSuspects(reporting: report)
                }
            }
            await store.run { event in
                switch event {
                case .connected:
                    self.state.withLock { $0.isConnected = true }
                    await report(event)
                    self.wakeCheckerIfNeeded()
                case .disconnected:
                    self.state.withLock { $0.isConnected = false }
                    await report(event)
                case .received(let records):
                    let opened = self.accept(records)
                    if !opened.isEmpty {
                        await report(.received(opened))
                    }
                }
            }
            wake.finish()
            group.cancelAll()
        }
        state.withLock { state in
            state.wakeChecker = nil
            state.isConnected = false
        }
    }

    public func timestamps() async throws -> [String: SyncTimestamp] {
        try await verify()
        let stored = try await store.timestamps()
        // Names not known here yet are learnt by opening their records, in batches.
        let unknown = state.withLock { state in
            stored.keys.filter { !Self.isNamespaceRecord($0) && state.names[$0] == nil }.sorted()
        }
        for start in stride(from: 0, to: unknown.count, by: 1_000) {
            let batch = Array(unknown[start..<min(start + 1_000, unknown.count)])
            _ = accept(try await store.records(forKeys: batch))
        }
        return state.withLock { state in
            var clear: [String: SyncTimestamp] = [:]
            for (storedName, timestamp) in stored {
                if let name = state.names[storedName] {
                    clear[name] = timestamp
                }
            }
            return clear
        }
    }

    public func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        try await verify()
        return accept(try await store.records(forKeys: keys.map { storedName(of: $0) }))
    }

    public func changesSinceLastConnection() async throws -> [SyncRecord]? {
        try await verify()
        let mustCatchUpInFull = state.withLock { state in
            defer { state.mustCatchUpInFull = false }
            return state.mustCatchUpInFull
        }
        guard let changes = try await store.changesSinceLastConnection() else { return nil }
        let opened = accept(changes)
        return mustCatchUpInFull ? nil : opened
    }

    public func push(_ records: [SyncRecord]) async throws {
        try await verify()
        let sealed = try records.map(seal)
        var refused: [String: String] = [:]
        do {
            try await store.push(sealed)
        } catch let refusal as SyncRecordsRefused {
            refused = refusal.reasons
        }
        // What the store now holds (or a later version of), for the head to claim.
        let claims = state.withLock { state in
            var changed = state.mustPushHead
            for record in sealed where refused[record.key] == nil {
                changed = state.known.raise(record.key, to: record.timestamp) || changed
            }
            // Until a head claiming them is stored: a head push that fails (a store's deadline on
            // a busy machine) is tried again with the next push, which the failure brings.
            state.mustPushHead = state.mustPushHead || changed
            return changed
        }
        if claims {
            try await pushHead(after: records.map(\.timestamp).max())
        }
        if !refused.isEmpty {
            let clear = state.withLock { state in
                Dictionary(refused.map { (state.names[$0.key] ?? $0.key, $0.value) }) { first, _ in first }
            }
            throw SyncRecordsRefused(clear)
        }
    }

    // MARK: The head

    /// Pushes the namespace's head, claiming every version this device knows the store holds, at a
    /// version later than every head it has seen and than `latest`; it is pushed after the records
    /// it claims are stored, so that it never claims one the store does not hold. A head the
    /// store refuses (its size) is reported; the records are stored all the same.
    private func pushHead(after latest: SyncTimestamp?) async throws {
        let (head, previous) = state.withLock { ($0.known, $0.headVersion) }
        let base = [previous, latest].compactMap { $0 }.max() ?? SyncTimestamp(wallTime: 0, counter: 0, origin: "")
        guard let version = base.successor(origin: headOrigin) else { return }
        let sealed = try keys.seal(
            name: Self.headName, value: head.encoded(), storedName: Self.headName, version: version.description)
        do {
            try await store.push([SyncRecord(key: Self.headName, value: sealed, timestamp: version)])
        } catch let refusal as SyncRecordsRefused {
            logger.error(
                """
                The end-to-end encryption's namespace head was refused by the store; rollbacks of this \
                namespace are not detected until it is stored
                """,
                metadata: ["namespace": "\(namespace)", "reason": "\(refusal)"])
            return
        }
        state.withLock { state in
            if state.headVersion.map({ $0 < version }) ?? true {
                state.headVersion = version
            }
            state.mustPushHead = false
        }
        memory.remember(version: version, head: head)
    }

    // MARK: Names

    /// The check record's name: it proves the passphrase (see ``verify()``).
    static let checkName = EndToEndKeys.prefix + "check"
    static let checkVersion = SyncTimestamp(wallTime: 0, counter: 0, origin: "e2e")
    /// The namespace head's name.
    static let headName = EndToEndKeys.prefix + "head"

    /// Whether `storedName` is the check record or the head rather than a key's.
    static func isNamespaceRecord(_ storedName: String) -> Bool {
        storedName == checkName || storedName == headName
    }

    /// The name the store holds `key`'s record under: a keyed hash of the key's name, the same on
    /// every machine with the passphrase (for tests and for looking at the store).
    public func storedName(forKey key: String) -> String {
        keys.storedName(of: key)
    }

    func storedName(of name: String) -> String {
        let stored = keys.storedName(of: name)
        state.withLock { $0.names[stored] = name }
        return stored
    }

    private func seal(_ record: SyncRecord) throws -> SyncRecord {
        let stored = storedName(of: record.key)
        let sealed = try keys.seal(
            name: record.key, value: record.value, storedName: stored, version: record.timestamp.description)
        return SyncRecord(key: stored, value: sealed, timestamp: record.timestamp)
    }
}
