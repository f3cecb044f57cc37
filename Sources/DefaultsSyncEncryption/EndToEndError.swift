import Defaults

/// Why end-to-end encryption could not seal or open a record, or what it found the store did.
public enum EndToEndError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The namespace's data was sealed with another passphrase: nothing is read or written.
    case wrongPassphrase(namespace: String)
    /// An empty passphrase protects nothing.
    case emptyPassphrase
    /// The platform's AES-GCM gave no combined box (never on 12-byte nonces).
    case cannotSeal
    /// A sealed record too short or badly formed to be one of this library's.
    case malformed
    /// The store did not keep the check record it was given: nothing is written before it does.
    case checkNotKept
    /// The store holds a record that the passphrase does not open (an unsealed value or removal,
    /// changed bytes, a value moved from another key or version): someone without the passphrase
    /// wrote it. It is refused, never applied. `key` is the key's name when this device knows it.
    case recordTampered(namespace: String, key: String, version: SyncTimestamp)
    /// The check record was removed or replaced by someone without the passphrase, and the
    /// namespace's other records confirm the passphrase: the check record is sealed again, and
    /// syncing goes on.
    case checkRecordTampered(namespace: String)
    /// The check record was removed or replaced by someone without the passphrase, and no other
    /// record of the namespace opens with this passphrase to confirm it: nothing is read or written.
    case checkRecordRemoved(namespace: String)
    /// The store holds an older version of a key's record (or of the namespace's head) than this
    /// device saw it hold: it was rolled back. The older record is refused, and this device
    /// catches up in full, pushing the newer values it holds.
    case rolledBack(namespace: String, key: String, version: SyncTimestamp, seen: SyncTimestamp)

    public var description: String {
        switch self {
        case .wrongPassphrase(let namespace):
            "the passphrase does not open the end-to-end encrypted data of namespace \"\(namespace)\": "
                + "nothing is read or written until the right one is given"
        case .emptyPassphrase: "the end-to-end encryption passphrase is empty"
        case .cannotSeal: "a value could not be sealed"
        case .malformed: "a sealed record is malformed"
        case .checkNotKept: "the store did not keep the end-to-end encryption check record; nothing is written"
        case .recordTampered(let namespace, let key, let version):
            "tampering in end-to-end encrypted namespace \"\(namespace)\": the record of \(key) at version "
                + "\(version) was not sealed with the passphrase (someone without it wrote it); it was refused"
        case .checkRecordTampered(let namespace):
            "tampering in end-to-end encrypted namespace \"\(namespace)\": the check record was removed or "
                + "replaced by someone without the passphrase; the other records confirm the passphrase, and "
                + "the check record was sealed again"
        case .checkRecordRemoved(let namespace):
            "tampering in end-to-end encrypted namespace \"\(namespace)\": the check record was removed or "
                + "replaced by someone without the passphrase, and no other record confirms this passphrase: "
                + "nothing is read or written"
        case .rolledBack(let namespace, let key, let version, let seen):
            "rollback in end-to-end encrypted namespace \"\(namespace)\": the store holds version \(version) of "
                + "\(key), older than version \(seen) this device saw; the older record was refused, and this "
                + "device catches up in full to push the newer values it holds"
        }
    }
}
