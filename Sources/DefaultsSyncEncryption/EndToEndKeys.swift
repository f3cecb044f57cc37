import Crypto
import Foundation
import _CryptoExtras

/// The keys of one namespace's end-to-end encryption, derived from the passphrase: one seals
/// values (AES-256-GCM), the other names keys (HMAC-SHA256), so that neither a value nor a key's
/// name reaches the store in clear.
struct EndToEndKeys: Sendable {
    let sealing: SymmetricKey
    let naming: SymmetricKey

    /// scrypt's cost: 2^15 rounds of 8 blocks, 32 MB and about a tenth of a second once per launch,
    /// so that guessing passphrases from a copy of the database is slow.
    static let rounds = 1 << 15
    static let blockSize = 8

    /// Derives the keys with scrypt, salted per namespace (the same passphrase gives other keys in
    /// another namespace, and no table of guesses serves two namespaces).
    init(passphrase: String, namespace: String) throws {
        let salt = SHA256.hash(data: Data("swift-defaults end-to-end v1\u{0}\(namespace)".utf8))
        let derived = try KDF.Scrypt.deriveKey(
            from: Data(passphrase.utf8), salt: Data(salt), outputByteCount: 64, rounds: Self.rounds,
            blockSize: Self.blockSize, parallelism: 1)
        let bytes = derived.withUnsafeBytes { Data($0) }
        sealing = SymmetricKey(data: bytes.prefix(32))
        naming = SymmetricKey(data: bytes.suffix(32))
    }

    /// The name a key is stored under: a keyed hash of its name, the same on every machine that
    /// has the passphrase, and meaningless without it.
    func storedName(of name: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data(name.utf8), using: naming)
        return Self.prefix
            + Data(code).base64EncodedString().replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "=", with: "")
    }

    /// Every stored name starts with it (and the check record's is exactly `prefix + "check"`).
    static let prefix = "e2e1."

    /// Seals a value (`nil`: a removal) with its key's name, bound to the stored name and the
    /// version, so that the store can neither move it to another key nor give it another version.
    func seal(name: String, value: Data?, storedName: String, version: String) throws -> Data {
        var plain = Data()
        let nameBytes = Data(name.utf8)
        plain.append(contentsOf: withUnsafeBytes(of: UInt32(nameBytes.count).bigEndian, Array.init))
        plain.append(nameBytes)
        plain.append(value == nil ? 0 : 1)
        plain.append(value ?? Data())
        let sealed = try AES.GCM.seal(plain, using: sealing, authenticating: Self.context(storedName, version))
        guard let combined = sealed.combined else { throw EndToEndError.cannotSeal }
        return combined
    }

    /// Opens what ``seal(name:value:storedName:version:)`` made; throws when the passphrase is not
    /// the one it was sealed with, or the bytes, the stored name or the version were changed.
    func open(_ sealed: Data, storedName: String, version: String) throws -> (name: String, value: Data?) {
        let box = try AES.GCM.SealedBox(combined: sealed)
        let plain = try AES.GCM.open(box, using: sealing, authenticating: Self.context(storedName, version))
        guard plain.count >= 5 else { throw EndToEndError.malformed }
        let length = plain.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        let nameEnd = plain.startIndex + 4 + length
        guard length >= 0, nameEnd < plain.endIndex,
            let name = String(data: plain[(plain.startIndex + 4)..<nameEnd], encoding: .utf8)
        else { throw EndToEndError.malformed }
        let hasValue = plain[nameEnd] == 1
        return (name, hasValue ? Data(plain[(nameEnd + 1)...]) : nil)
    }

    private static func context(_ storedName: String, _ version: String) -> Data {
        Data("\(storedName)\n\(version)".utf8)
    }
}

extension EndToEndKeys {
    /// Names this namespace's files on a device (``HeadMemory``): a keyed hash, so that the name
    /// tells neither the namespace nor the passphrase.
    var stateID: String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("device state".utf8), using: naming)
        return Data(code).prefix(12).map { String(format: "%02x", $0) }.joined()
    }
}
