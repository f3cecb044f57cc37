import Defaults
import Foundation
import Synchronization
import Testing

private let groupSuite = InMemorySuite(name: "key-groups")

private enum BookSettings: Defaults.KeyGroup {
    static let namespace = "book"
    static var suite: any DefaultsSuite { groupSuite }

    static let id = key("id", default: 0)
    static let title: Defaults.Key<String?> = key("title")
}

private enum ComicSettings: Defaults.KeyGroup {
    static let namespace = "comic"
    static var suite: any DefaultsSuite { groupSuite }

    static let id = key("id", default: 0)
    static let openedAt = key("openedAt") { Date(timeIntervalSince1970: 0) }
}

private let shelfSuite = InMemorySuite(values: ["shelf:a": 1, "shelf:b": "two", "shelfish": 3, "other": 4])

private enum Shelf: Defaults.KeyGroup {
    static let namespace = "shelf"
    static var suite: any DefaultsSuite { shelfSuite }
}

extension Integrations {
    @Suite struct KeyGroupTests {
        @Test func twoGroupsWithAnIDKeyKeepTheirOwnValues() {
            Defaults[BookSettings.id] = 5
            Defaults[ComicSettings.id] = 10
            #expect(Defaults[BookSettings.id] == 5)
            #expect(Defaults[ComicSettings.id] == 10)
            #expect(BookSettings.id.name == "book:id")
            #expect(ComicSettings.id.name == "comic:id")
            #expect(groupSuite.object(forKey: "book:id") as? Int == 5)
            #expect(groupSuite.object(forKey: "comic:id") as? Int == 10)
            #expect(groupSuite.object(forKey: "id") == nil)
            #expect(Defaults.KeyRegistry.conflicts(in: groupSuite).isEmpty)
        }

        @Test func groupKeysAreOrdinaryKeys() {
            let suite = InMemorySuite()
            let title = BookSettings.title.in(suite)
            #expect(title.name == "book:title")
            #expect(Defaults[title] == nil)
            Defaults[title] = "Dune"
            #expect(suite.object(forKey: "book:title") as? String == "Dune")
            #expect(ComicSettings.openedAt.isDefaultValueDynamic)
            #expect(BookSettings.storedName(for: "x") == "book:x")
            #expect(Defaults.isValidKeyName(BookSettings.storedName(for: "id")))
        }

        @Test func removeAllClearsOnlyTheNamespace() {
            #expect(Shelf.storedNames == ["shelf:a", "shelf:b"])
            let posts = Mutex(0)
            let token = shelfSuite.changes.addObserver { _ in posts.withLock { $0 += 1 } }
            Shelf.removeAll()
            shelfSuite.changes.removeObserver(token)
            #expect(posts.withLock { $0 } == 1)
            #expect(Set(shelfSuite.persistentValues().keys) == ["shelfish", "other"])
        }
    }
}
