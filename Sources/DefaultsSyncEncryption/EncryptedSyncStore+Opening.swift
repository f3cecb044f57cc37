import Defaults
import Foundation

/// Opening what the store gives, and refusing what a device with the passphrase did not write
/// or what is older than the device knows the store holds.
extension EncryptedSyncStore {
    /// The clear records among `records`; the namespace's own records (check, head) are taken in,
    /// and every record refused is reported or looked at again (see ``checkSuspects(reporting:)``).
    func accept(_ records: [SyncRecord]) -> [SyncRecord] {
        var clear: [SyncRecord] = []
        for record in records {
            switch record.key {
            case Self.checkName:
                if !opensAsCheck(record) {
                    suspect(check: true)
                }
            case Self.headName:
                guard let head = openHead(record) else {
                    note(.recordTampered(namespace: namespace, key: "the namespace head", version: record.timestamp))
                    continue
                }
                acceptHead(head, version: record.timestamp)
            default:
                guard let opened = openKey(record) else { continue }
                let isOlder = state.withLock { state in
                    if let seen = state.known.versions[record.key], record.timestamp < seen { return true }
                    state.known.raise(record.key, to: record.timestamp)
                    return false
                }
                // Stale (a delivery of a change already replaced) or rolled back: a fresh read decides.
                if isOlder {
                    suspect(record.key)
                } else {
                    clear.append(opened)
                }
            }
        }
        return clear
    }

    /// Takes in a head's claims; a head older than the newest seen is looked at again.
    func acceptHead(_ head: NamespaceHead, version: SyncTimestamp) {
        let remember = state.withLock { state -> NamespaceHead? in
            // Its claims were true when it was stored, and records only move forward.
            state.known.merge(head)
            if let seen = state.headVersion, version < seen { return nil }
            state.headVersion = version
            return state.known
        }
        if let remember {
            memory.remember(version: version, head: remember)
        } else {
            suspect(Self.headName)
        }
    }

    /// The clear record a key's sealed record holds, or `nil`: one not sealed with the
    /// passphrase under its stored name and version is reported as tampering (a record that is not
    /// end-to-end encrypted at all, from before the passphrase, is refused and logged once).
    func openKey(_ record: SyncRecord) -> SyncRecord? {
        guard let sealed = record.value,
            let opened = try? keys.open(sealed, storedName: record.key, version: record.timestamp.description),
            keys.storedName(of: opened.name) == record.key
        else {
            if record.key.hasPrefix(EndToEndKeys.prefix) {
                let name = state.withLock { $0.names[record.key] } ?? record.key
                note(.recordTampered(namespace: namespace, key: "key \"\(name)\"", version: record.timestamp))
            } else if state.withLock({ $0.clearRecords.insert(record.key).inserted }) {
                // Not read: whoever holds a token could have written it, backdated. Told once.
                logger.warning(
                    """
                    A record in clear was refused: the namespace holds records stored before the \
                    passphrase was set (or by someone without it), which the server can read. This \
                    machine's values are pushed sealed all the same; to take the clear ones off the \
                    server, sync into a new namespace with the passphrase and stop using this one.
                    """,
                    metadata: ["namespace": "\(namespace)", "record": "\(record.key)"])
            }
            return nil
        }
        state.withLock { $0.names[record.key] = opened.name }
        return SyncRecord(key: opened.name, value: opened.value, timestamp: record.timestamp)
    }

    /// The head a record holds, when sealed with the passphrase as the head at its version.
    func openHead(_ record: SyncRecord) -> NamespaceHead? {
        guard let sealed = record.value,
            let opened = try? keys.open(sealed, storedName: Self.headName, version: record.timestamp.description),
            opened.name == Self.headName, let payload = opened.value
        else { return nil }
        return try? NamespaceHead(decoding: payload)
    }

    /// Whether a record is the check record sealed with the passphrase.
    func opensAsCheck(_ record: SyncRecord) -> Bool {
        guard let sealed = record.value,
            let opened = try? keys.open(sealed, storedName: Self.checkName, version: record.timestamp.description)
        else { return false }
        return opened.name == Self.checkName
    }

    // MARK: Reporting

    /// The most findings ``detectedTampering`` keeps (the latest): a hostile store can make
    /// endless ones.
    static let maximumFindings = 100

    /// Reports a finding once: logged at error level and kept in ``detectedTampering``. Returns
    /// whether it was new.
    @discardableResult
    func note(_ finding: EndToEndError) -> Bool {
        let isNew = state.withLock { state in
            guard !state.detectedTampering.contains(finding) else { return false }
            state.detectedTampering.append(finding)
            if state.detectedTampering.count > Self.maximumFindings {
                state.detectedTampering.removeFirst()
            }
            return true
        }
        if isNew {
            logger.error("\(finding)", metadata: ["namespace": "\(namespace)"])
        }
        return isNew
    }
}
