import DefaultsPostgres
import Foundation
import Testing

@testable import DefaultsSyncEncryption

/// What the store holds of an end-to-end encrypted record opens only with the passphrase, under
/// the stored name and version it was sealed with.
struct EndToEndKeysTests {
    @Test func aSealedValueOpensOnlyWithItsPassphraseNameAndVersion() throws {
        let keys = try EndToEndKeys(passphrase: "right", namespace: "com.example.app")
        let stored = keys.storedName(of: "volume")
        #expect(stored.hasPrefix("e2e1.") && !stored.contains("volume"))
        #expect(stored == keys.storedName(of: "volume"), "the same on every machine")
        let sealed = try keys.seal(name: "volume", value: Data("7".utf8), storedName: stored, version: "5.0.a")
        let opened = try keys.open(sealed, storedName: stored, version: "5.0.a")
        #expect(opened.name == "volume" && opened.value == Data("7".utf8))

        // The store can neither give it a later version nor move it under another key.
        #expect(throws: (any Error).self) { try keys.open(sealed, storedName: stored, version: "9.0.a") }
        #expect(throws: (any Error).self) {
            try keys.open(sealed, storedName: keys.storedName(of: "other"), version: "5.0.a")
        }
        var flipped = sealed
        flipped[flipped.startIndex + 20] ^= 1
        #expect(throws: (any Error).self) { try keys.open(flipped, storedName: stored, version: "5.0.a") }

        // Another passphrase, or the same one in another namespace, opens nothing.
        let wrong = try EndToEndKeys(passphrase: "wrong", namespace: "com.example.app")
        #expect(throws: (any Error).self) { try wrong.open(sealed, storedName: stored, version: "5.0.a") }
        let elsewhere = try EndToEndKeys(passphrase: "right", namespace: "com.example.other")
        #expect(elsewhere.storedName(of: "volume") != stored)

        // A removal is sealed too: the store cannot tell it from a value.
        let removal = try keys.seal(name: "volume", value: nil, storedName: stored, version: "6.0.a")
        #expect(try keys.open(removal, storedName: stored, version: "6.0.a").value == nil)
    }

    @Test func anEmptyPassphraseIsRefused() throws {
        // Never connected: made only to be wrapped.
        let store = try PostgresSyncStore(url: "postgres://user@localhost/db?sslmode=disable", namespace: "n")
        #expect(throws: EndToEndError.self) { try EncryptedSyncStore(store, passphrase: "", namespace: "n") }
    }
}
