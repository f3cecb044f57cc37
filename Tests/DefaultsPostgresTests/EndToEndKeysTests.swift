import Defaults
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

/// The namespace head's claims, as sealed in the head record: they survive a round trip, merge
/// by taking the later version of each key, and a payload that is not one is refused, never read
/// past its end.
struct NamespaceHeadTests {
    static func version(_ wall: Int64, _ counter: Int64 = 0, _ origin: String = "a") -> SyncTimestamp {
        SyncTimestamp(wallTime: wall, counter: counter, origin: origin)
    }

    @Test func claimsSurviveARoundTripAndMergeByTheLaterVersion() throws {
        var head = NamespaceHead()
        head.raise("e2e1.x", to: Self.version(5, 1, "laptop"))
        head.raise("e2e1.y", to: Self.version(-3, 0, "phone"))
        head.raise("e2e1.z", to: Self.version(Int64.max, Int64.max, "laptop"))
        let olderClaims = head.raise("e2e1.x", to: Self.version(4))
        #expect(!olderClaims, "an older version claims nothing")
        #expect(try NamespaceHead(decoding: head.encoded()) == head)

        var other = NamespaceHead()
        other.raise("e2e1.x", to: Self.version(6))
        other.raise("e2e1.y", to: Self.version(-4))
        other.raise("e2e1.w", to: Self.version(1))
        let mergedLater = head.merge(other)
        #expect(mergedLater)
        #expect(head.versions["e2e1.x"] == Self.version(6))
        #expect(head.versions["e2e1.y"] == Self.version(-3, 0, "phone"))
        #expect(head.versions["e2e1.w"] == Self.version(1))
        let mergedAgain = head.merge(other)
        #expect(!mergedAgain, "nothing later the second time")
    }

    @Test func aPayloadThatIsNotAHeadIsRefused() throws {
        var head = NamespaceHead()
        head.raise("e2e1.x", to: Self.version(5))
        let encoded = head.encoded()
        for length in 0..<encoded.count {
            #expect(throws: EndToEndError.malformed) { try NamespaceHead(decoding: encoded.prefix(length)) }
        }
        #expect(throws: EndToEndError.malformed) { try NamespaceHead(decoding: encoded + [0]) }
        var otherFormat = encoded
        otherFormat[otherFormat.startIndex] = 2
        #expect(throws: EndToEndError.malformed) { try NamespaceHead(decoding: otherFormat) }
        // A count of keys far beyond what the bytes hold is refused before anything is allocated.
        let lying = Data([1, 0, 0, 0xff, 0xff, 0xff, 0xff])
        #expect(throws: EndToEndError.malformed) { try NamespaceHead(decoding: lying) }
        // An origin index past the origins.
        var badOrigin = encoded
        badOrigin[badOrigin.endIndex - 1] = 7
        #expect(throws: EndToEndError.malformed) { try NamespaceHead(decoding: badOrigin) }
    }
}
