import DefaultsPropertyList
import DefaultsStorage
import Foundation

extension SyncEngine {
    /// The values decided for one suite from a batch of records: written in one edit.
    private struct SuiteWrites {
        let suite: any DefaultsSuite
        let journal: SyncJournal
        var writes: [ConditionalWrite] = []

        /// Adds a write; a key written twice in one batch (its record and its former name's) is
        /// written once, with the value decided last.
        mutating func add(_ write: ConditionalWrite) {
            if let index = writes.firstIndex(where: { $0.key == write.key }) {
                writes[index].value = write.value
            } else {
                writes.append(write)
            }
        }
    }

    /// What applying a batch found besides the writes, to act on with no lock held.
    private struct Findings {
        var recording = LocalRecording()
        var unreadable: [(suite: any DefaultsSuite, problem: DefaultsError)] = []
    }

    /// Applies remote records to every synced key of their name whose local version is older, as
    /// ``SyncRules/remote(_:_:entry:local:heldDigest:)`` decides: each suite's new values in one
    /// write, one change event. A record of a key's former name (pushed by a machine with an
    /// earlier version) is applied to the key, converted by its migration, on the same terms.
    ///
    /// Decided and entered in the journals under the lock; the journals are made durable, then
    /// the values are written with the origin ``SuiteChange/Origin/sync``, without the lock, so
    /// that observers may block on threads that write other synced keys. A key written locally
    /// meanwhile keeps that newer value (``ConditionalWrite/expected``).
    ///
    /// A record is decoded once and never encoded (values are compared by digests of the values
    /// themselves, ``SyncValue/digest(of:)``), and read as each key would store it before the
    /// lock is taken.
    func apply(_ records: [SyncRecord]) {
        guard !records.isEmpty else { return }
        reloadJournals(of: nil)
        let (arrivals, problems) = arrivals(of: records)
        let (batches, findings) = withState { state in
            var batches: [ObjectIdentifier: SuiteWrites] = [:]
            var findings = Findings()
            findings.recording.problems = problems
            if let problem = problems.last {
                state.session.problems.raise(.value, problem)
            }
            // Each suite's stored values as the batch found them: the batch writes none until
            // it is decided.
            var persistent: [ObjectIdentifier: [String: PropertyListValue]] = [:]
            for arrival in arrivals {
                let (record, id, name) = (arrival.record, arrival.suite, arrival.name)
                guard let synced = state.suites[id] else { continue }
                let entry = synced.journal.entry(forKey: name)
                guard SyncRules.isNewer(record.timestamp, than: entry) else { continue }
                if persistent[id] == nil {
                    persistent[id] = synced.suite.persistentStoredValues()
                }
                let expected = persistent[id]?[name]
                let local = SyncRules.local(
                    digest: { SyncValue.digest(of: expected, likeRecorded: $0) }, entry: entry, isFirstLook: false,
                    isOwnWrite: false)
                let heldDigest = SyncValue.digest(of: expected)
                var verdict = SyncRules.remote(
                    record.timestamp, arrival.incoming, entry: entry, local: local, heldDigest: heldDigest)
                if case .keepLocal = verdict {
                    // Stamped after the record: the local change is the newer one.
                    state.clock.receive(record.timestamp)
                    do {
                        try recordPending(name, held: expected, replacing: entry, in: id, &state)
                        findings.recording.hasChanges = true
                        findings.recording.notes.append("local change of \"\(name)\" kept over a remote one")
                    } catch {
                        // One that cannot be pushed (over the size limit) gives way to the remote value.
                        findings.recording.problems.append("\(error)")
                        verdict = SyncRules.remote(
                            record.timestamp, arrival.incoming, entry: entry, local: .known, heldDigest: heldDigest)
                    }
                }
                switch verdict {
                case .notNewer, .keepLocal:
                    continue
                case .keepAside(let reason):
                    if let problem = keepAside(record, in: synced.suite, because: reason, &state) {
                        findings.unreadable.append((synced.suite, problem))
                    }
                case .apply(let newEntry):
                    state.clock.receive(record.timestamp)
                    synced.journal.setEntry(newEntry, forKey: name)
                    state.session.keptAside[record.key] = nil
                    let into = name == record.key ? "" : " into \"\(name)\""
                    findings.recording.notes.append("remote change of \"\(record.key)\"\(into) at \(record.timestamp)")
                    batches[id, default: SuiteWrites(suite: synced.suite, journal: synced.journal)].add(
                        ConditionalWrite(key: name, expected: expected, value: arrival.value))
                }
            }
            for (id, batch) in batches {
                state.suites[id]?.applying.formUnion(batch.writes.map(\.key))
            }
            return (Array(batches.values), findings)
        }
        for (suite, problem) in findings.unreadable {
            suite.reportProblem(problem)
        }
        finish(findings.recording)
        for batch in batches {
            batch.journal.flushLoggingFailure()
        }
        for batch in batches {
            let stored = batch.suite.applyConditionally(batch.writes, origin: .sync)
            withState { $0.suites[ObjectIdentifier(batch.suite)]?.applying = [] }
            for write in batch.writes where !stored.contains(write.key) {
                debug("remote change of \"\(write.key)\" not stored: the key changed here meanwhile")
            }
        }
    }

    /// A record read for one synced key: what the key would store.
    private struct Arrival {
        let record: SyncRecord
        let suite: ObjectIdentifier
        let name: String
        let value: PropertyListValue?
        let incoming: SyncRules.Incoming
    }

    /// Each record for each synced key it is for, decoded once and read as the key would store
    /// it, with no lock held: a migration's conversion and a key's declaration are the program's
    /// code, which may declare or write synced keys. Returns the records that are not property
    /// lists as problems.
    private func arrivals(of records: [SyncRecord]) -> (arrivals: [Arrival], problems: [String]) {
        let targets = withState { state in
            records.map { record in
                state.suites.values.compactMap { synced in
                    synced.target(ofRecordNamed: record.key).map { (synced.id, synced.suite, $0) }
                }
            }
        }
        var arrivals: [Arrival] = []
        var problems: [String] = []
        let now = withState { $0.clock }.physicalTime
        for (record, targets) in zip(records, targets) where !targets.isEmpty {
            if record.timestamp.version.isTooFarAhead(of: now) {
                let hours = record.timestamp.wallTime / 3_600_000 - now / 3_600_000
                let reason = "stamped \(hours) hours ahead of this machine's clock, more than clocks disagree by"
                for (id, _, target) in targets {
                    let incoming = SyncRules.Incoming.aheadOfClock(reason: reason)
                    arrivals.append(
                        Arrival(record: record, suite: id, name: target.name, value: nil, incoming: incoming))
                }
                continue
            }
            let decoded: PropertyListValue?
            do {
                decoded = try SyncValue.decode(record.value, key: record.key)
            } catch {
                problems.append("\(error)")
                continue
            }
            let digest = SyncValue.digest(of: decoded)
            for (id, suite, target) in targets {
                let (value, incoming) = Self.incoming(decoded, digest: digest, of: record, as: target, in: suite)
                arrivals.append(Arrival(record: record, suite: id, name: target.name, value: value, incoming: incoming))
            }
        }
        return (arrivals, problems)
    }

    /// A record's value as the key `target` would store it: converted by the key's migration
    /// when the record is of a former name, and checked against the key's declaration, which
    /// may not read it (another version of the program stores another type there).
    private static func incoming(
        _ decoded: PropertyListValue?, digest: String, of record: SyncRecord,
        as target: (name: String, migration: (any SyncedKeyMigration)?), in suite: any DefaultsSuite
    ) -> (PropertyListValue?, SyncRules.Incoming) {
        var value = decoded
        var digest = digest
        if let migration = target.migration, let old = decoded {
            guard let converted = migration.converted(old, from: record.key) else {
                let reason = "\(migration.valueTypeName) of \"\(target.name)\" cannot convert \(old.kindName)"
                return (nil, .unreadable(reason: reason))
            }
            value = converted
            digest = SyncValue.digest(of: converted)
        }
        if let value, let reason = DeclaredKeyRule.whyUnreadable(value, named: target.name, in: suite) {
            return (nil, .unreadable(reason: reason))
        }
        return (value, .value(digestedAs: digest))
    }

    /// Keeps `record` aside (listed in the status by its name), and returns the problem to
    /// report the first time; called holding the lock.
    private func keepAside(
        _ record: SyncRecord, in suite: any DefaultsSuite, because reason: String, _ state: inout State
    ) -> DefaultsError? {
        guard state.session.keptAside[record.key] != record.timestamp else { return nil }
        state.session.keptAside[record.key] = record.timestamp
        return DefaultsError(
            suite: suite.name, kind: .wrongType, key: record.key,
            message: "the value of \"\(record.key)\" synced from another machine was kept aside: "
                + "\(reason); the local value stays")
    }
}
