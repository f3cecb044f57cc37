import Defaults

/// The passphrase's proof: the check record, the head, or any record of the namespace that opens.
extension EncryptedSyncStore {
    /// Makes sure the namespace's data is sealed with this passphrase before anything is read or
    /// written: the check record or the head opens, or, when neither does, another record of the
    /// namespace. A check record removed or replaced by someone without the passphrase is reported
    /// as tampering and sealed again when something else confirms the passphrase; with nothing to
    /// confirm it, nothing is read or written. An empty namespace gets its check record here: of
    /// two machines writing it at once, the one stored first stays (a record is replaced only by a
    /// later one), and the other reads it back.
    func verify() async throws {
        if state.withLock({ $0.isVerified }) { return }
        for attempt in 0..<2 {
            let fetched = try await store.records(forKeys: [Self.checkName, Self.headName])
            let check = fetched.first { $0.key == Self.checkName }
            let headRecord = fetched.first { $0.key == Self.headName }
            let checkOpens = check.map(opensAsCheck) ?? false
            let head = headRecord.flatMap(openHead)
            var proof = Proof.opens
            if !checkOpens, head == nil {
                proof = try await probe()
            }
            switch proof {
            case .opens:
                if !checkOpens {
                    note(.checkRecordTampered(namespace: namespace))
                    try await pushCheck(over: check)
                }
                if let headRecord {
                    if let head {
                        acceptHead(head, version: headRecord.timestamp)
                    } else {
                        note(
                            .recordTampered(
                                namespace: namespace, key: "the namespace head", version: headRecord.timestamp))
                    }
                }
                state.withLock { $0.isVerified = true }
                return
            case .noneOpens:
                // Sealed data this passphrase does not open, and a check record of another
                // passphrase; or no check record any more, which only tampering removes.
                if check?.value != nil { throw EndToEndError.wrongPassphrase(namespace: namespace) }
                throw EndToEndError.checkRecordRemoved(namespace: namespace)
            case .empty:
                guard check?.value == nil else { throw EndToEndError.wrongPassphrase(namespace: namespace) }
                if attempt == 0 {
                    // An empty namespace: its first machine seals the check record (again, over a
                    // removal someone without the passphrase pushed).
                    if check != nil {
                        note(.checkRecordTampered(namespace: namespace))
                    }
                    try await pushCheck(over: check)
                }
            }
        }
        throw EndToEndError.checkNotKept
    }

    enum Proof {
        /// A key's record opened with the passphrase.
        case opens
        /// The namespace holds sealed records, and none opened.
        case noneOpens
        /// The namespace holds no sealed key record.
        case empty
    }

    /// Whether any key's sealed record opens, looking at them in batches until one does.
    private func probe() async throws -> Proof {
        let sealed = try await store.timestamps().keys.filter {
            $0.hasPrefix(EndToEndKeys.prefix) && !Self.isNamespaceRecord($0)
        }.sorted()
        for start in stride(from: 0, to: sealed.count, by: 100) {
            let batch = Array(sealed[start..<min(start + 100, sealed.count)])
            for record in try await store.records(forKeys: batch) where opensQuietly(record) {
                return .opens
            }
        }
        return sealed.isEmpty ? .empty : .noneOpens
    }

    /// Whether a key's record opens, reporting nothing: while the passphrase is not confirmed,
    /// a record that does not open may be the passphrase's fault, not the store's.
    private func opensQuietly(_ record: SyncRecord) -> Bool {
        guard let sealed = record.value,
            let opened = try? keys.open(sealed, storedName: record.key, version: record.timestamp.description)
        else { return false }
        return keys.storedName(of: opened.name) == record.key
    }

    /// Seals the check record, at a version later than `existing` (what someone without the
    /// passphrase put there), or at the first version in an empty namespace.
    func pushCheck(over existing: SyncRecord?) async throws {
        let version =
            existing.flatMap { $0.timestamp.successor(origin: Self.checkVersion.origin) }
            ?? Self.checkVersion
        let sealed = try keys.seal(
            name: Self.checkName, value: nil, storedName: Self.checkName, version: version.description)
        try await store.push([SyncRecord(key: Self.checkName, value: sealed, timestamp: version)])
    }

    // MARK: Suspects

    /// Marks a stored name (a key's record, or the head) to be read again, or the check record.
    func suspect(_ storedName: String? = nil, check: Bool = false) {
        state.withLock { state in
            if let storedName {
                state.suspects.insert(storedName)
            }
            state.isCheckSuspect = state.isCheckSuspect || check
        }
        wakeCheckerIfNeeded()
    }

    func wakeCheckerIfNeeded() {
        state.withLock { state in
            if state.isConnected, !state.suspects.isEmpty || state.isCheckSuspect {
                state.wakeChecker?.yield()
            }
        }
    }

    /// Reads the suspect records again, now that this device knows later versions: a delivery may
    /// be stale (a change already replaced), but a fresh read that is still older than what the
    /// device saw the store hold is a rollback. A rollback is reported, and then, through the
    /// library (a `.disconnected` with the finding, a `.connected`, and a catch-up in full), the
    /// newer values this device holds are pushed again. A check record that does not open is
    /// sealed again.
    func checkSuspects(reporting report: @escaping @Sendable (SyncEvent) async -> Void) async {
        let (names, isCheckSuspect) = state.withLock { state in
            defer {
                state.suspects = []
                state.isCheckSuspect = false
            }
            return (state.suspects, state.isCheckSuspect)
        }
        do {
            if isCheckSuspect {
                let check = try await store.records(forKeys: [Self.checkName]).first
                if !(check.map(opensAsCheck) ?? false) {
                    note(.checkRecordTampered(namespace: namespace))
                    try await pushCheck(over: check)
                }
            }
            guard !names.isEmpty else { return }
            var rollbacks: [EndToEndError] = []
            var fresh: [SyncRecord] = []
            for record in try await store.records(forKeys: names.sorted()) {
                if record.key == Self.headName {
                    guard let head = openHead(record) else {
                        note(
                            .recordTampered(namespace: namespace, key: "the namespace head", version: record.timestamp))
                        continue
                    }
                    let seen = state.withLock { state in
                        state.known.merge(head)
                        return state.headVersion
                    }
                    if let seen, record.timestamp < seen {
                        state.withLock { $0.mustPushHead = true }
                        rollbacks.append(
                            .rolledBack(
                                namespace: namespace, key: "the namespace head", version: record.timestamp, seen: seen))
                    } else {
                        acceptHead(head, version: record.timestamp)
                    }
                    continue
                }
                guard let opened = openKey(record) else { continue }
                let seen = state.withLock { state -> SyncTimestamp? in
                    if let seen = state.known.versions[record.key], record.timestamp < seen { return seen }
                    state.known.raise(record.key, to: record.timestamp)
                    return nil
                }
                if let seen {
                    rollbacks.append(
                        .rolledBack(
                            namespace: namespace, key: "key \"\(opened.key)\"", version: record.timestamp, seen: seen))
                } else {
                    fresh.append(opened)
                }
            }
            if !fresh.isEmpty {
                await report(.received(fresh))
            }
            var firstNew: EndToEndError?
            for rollback in rollbacks where note(rollback) {
                firstNew = firstNew ?? rollback
            }
            if let first = firstNew, state.withLock({ $0.isConnected }) {
                state.withLock { $0.mustCatchUpInFull = true }
                await report(.disconnected(first))
                await report(.connected)
            }
        } catch {
            // Not connected, or the store failed: looked at again at the next connection.
            state.withLock { state in
                state.suspects.formUnion(names)
                state.isCheckSuspect = state.isCheckSuspect || isCheckSuspect
            }
        }
    }
}
