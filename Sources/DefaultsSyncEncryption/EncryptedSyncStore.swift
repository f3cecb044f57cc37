import Defaults
import Foundation
import Logging
import Synchronization

/// A sync store that encrypts end to end: every value is sealed with AES-256-GCM and every key's
/// name replaced by a keyed hash before it reaches the store it wraps, so that neither the server
/// nor whoever reads its database learns a name or a value.
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
///   the later of two records; each is bound to its sealed value, so the store cannot change it.
public final class EncryptedSyncStore: DefaultsSyncStore {
    public let description: String
    /// The namespace whose data this store seals (its salt).
    public let namespace: String

    private let store: any DefaultsSyncStore
    private let keys: EndToEndKeys
    /// Clear names of the stored names this machine wrote, asked for or opened.
    private let names = Mutex<[String: String]>([:])
    /// Whether the namespace's check record opened with this passphrase.
    private let isVerified = Mutex(false)
    private let logger = Logger(label: "swift-defaults.encryption")

    /// Wraps `store`, deriving the keys from `passphrase` (about a tenth of a second).
    ///
    /// - Parameters:
    ///   - store: The store the sealed records go to, for example a `PostgresSyncStore`.
    ///   - passphrase: The secret every machine of the namespace shares; never sent anywhere.
    ///   - namespace: The namespace the data belongs to, the salt of the keys.
    /// - Throws: ``EndToEndError`` for an empty passphrase.
    public init(_ store: any DefaultsSyncStore, passphrase: String, namespace: String) throws {
        guard !passphrase.isEmpty else { throw EndToEndError.emptyPassphrase }
        self.store = store
        self.namespace = namespace
        keys = try EndToEndKeys(passphrase: passphrase, namespace: namespace)
        description = "\(store.description), end-to-end encrypted"
    }

    // MARK: The check record

    static let checkName = EndToEndKeys.prefix + "check"
    static let checkVersion = SyncTimestamp(wallTime: 0, counter: 0, origin: "e2e")

    /// Makes sure the namespace's data is sealed with this passphrase before anything is read or
    /// written: opens the check record, or writes it when there is none. Of two machines writing
    /// it at once, the one stored first stays (a record is replaced only by a later one), and the
    /// other reads it back.
    private func verify() async throws {
        if isVerified.withLock({ $0 }) { return }
        for attempt in 0..<2 {
            if let record = try await store.records(forKeys: [Self.checkName]).first {
                guard let sealed = record.value,
                    let opened = try? keys.open(
                        sealed, storedName: Self.checkName, version: record.timestamp.description),
                    opened.name == Self.checkName
                else { throw EndToEndError.wrongPassphrase(namespace: namespace) }
                isVerified.withLock { $0 = true }
                return
            }
            if attempt == 0 {
                let sealed = try keys.seal(
                    name: Self.checkName, value: nil, storedName: Self.checkName,
                    version: Self.checkVersion.description)
                try await store.push([SyncRecord(key: Self.checkName, value: sealed, timestamp: Self.checkVersion)])
            }
        }
        throw EndToEndError.checkNotKept
    }

    // MARK: Sealing and opening

    private func storedName(of name: String) -> String {
        let stored = keys.storedName(of: name)
        names.withLock { $0[stored] = name }
        return stored
    }

    private func seal(_ record: SyncRecord) throws -> SyncRecord {
        let stored = storedName(of: record.key)
        let sealed = try keys.seal(
            name: record.key, value: record.value, storedName: stored, version: record.timestamp.description)
        return SyncRecord(key: stored, value: sealed, timestamp: record.timestamp)
    }

    /// The clear record, or `nil` (logged) for one that does not open: sealed with another
    /// passphrase, or changed by someone without it. The check record is not a key's.
    private func open(_ record: SyncRecord) -> SyncRecord? {
        guard record.key != Self.checkName else { return nil }
        guard let sealed = record.value,
            let opened = try? keys.open(sealed, storedName: record.key, version: record.timestamp.description),
            keys.storedName(of: opened.name) == record.key
        else {
            logger.warning(
                "A synced record that this passphrase does not open was left alone",
                metadata: ["namespace": "\(namespace)", "record": "\(record.key)"])
            return nil
        }
        names.withLock { $0[record.key] = opened.name }
        return SyncRecord(key: opened.name, value: opened.value, timestamp: record.timestamp)
    }

    // MARK: DefaultsSyncStore

    public func run(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        await store.run { event in
            guard case .received(let records) = event else { return await report(event) }
            let opened = records.compactMap(self.open)
            if !opened.isEmpty {
                await report(.received(opened))
            }
        }
    }

    public func timestamps() async throws -> [String: SyncTimestamp] {
        try await verify()
        let stored = try await store.timestamps()
        // Names not known here yet are learnt by opening their records, in batches.
        let unknown = names.withLock { names in
            stored.keys.filter { $0 != Self.checkName && names[$0] == nil }.sorted()
        }
        for start in stride(from: 0, to: unknown.count, by: 1_000) {
            let batch = Array(unknown[start..<min(start + 1_000, unknown.count)])
            for record in try await store.records(forKeys: batch) {
                _ = open(record)
            }
        }
        return names.withLock { names in
            var clear: [String: SyncTimestamp] = [:]
            for (storedName, timestamp) in stored {
                if let name = names[storedName] {
                    clear[name] = timestamp
                }
            }
            return clear
        }
    }

    public func records(forKeys keys: [String]) async throws -> [SyncRecord] {
        try await verify()
        return try await store.records(forKeys: keys.map(storedName)).compactMap(open)
    }

    public func changesSinceLastConnection() async throws -> [SyncRecord]? {
        try await verify()
        return try await store.changesSinceLastConnection()?.compactMap(open)
    }

    public func push(_ records: [SyncRecord]) async throws {
        try await verify()
        do {
            try await store.push(try records.map(seal))
        } catch let refusal as SyncRecordsRefused {
            let clear = names.withLock { names in
                Dictionary(refusal.reasons.map { (names[$0.key] ?? $0.key, $0.value) }) { first, _ in first }
            }
            throw SyncRecordsRefused(clear)
        }
    }
}
