@_spi(Testing) import Defaults
import Foundation
import Testing

extension Trust {
    /// Item 7: `Defaults.modify` is atomic across processes for a file suite.
    @Suite struct ModifyTests {
        @Test func incrementsFromSeveralProcessesAreAllKept() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let processes = 4
            let increments = 25
            let children = try (0..<processes).map { _ in
                try TestHelper.start(
                    ["trust-increment", directory.path, "counter", "count", "\(increments)"],
                    environment: ["XDG_CONFIG_HOME": directory.path])
            }
            for child in children {
                let result = try child.finish()
                #expect(result.status == 0 && result.output == "ok\n", "\(result)")
            }
            #expect(try directory.storedValues("counter")["count"] as? Int == processes * increments)
        }

        /// Two processes, 200 increments each, with the suite written between every two: exactly 400.
        @Test func twoProcessesIncrementingTwoHundredTimesEachGiveFourHundred() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let children = try (0..<2).map { _ in
                try TestHelper.start(
                    ["trust-increment", directory.path, "pair", "count", "200"],
                    environment: ["XDG_CONFIG_HOME": directory.path])
            }
            for child in children {
                let result = try child.finish()
                #expect(result.status == 0 && result.output == "ok\n", "\(result)")
            }
            #expect(try directory.storedValues("pair")["count"] as? Int == 400)
        }

        @Test(arguments: SuiteKind.withFileSuite)
        func modifyChangesTheValueAndReturnsTheResult(kind: SuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<[String]>("list\(UUID().uuidString.prefix(8))", default: ["a"], suite: suite)
            let count = Defaults.modify(key) { list -> Int in
                list.append("b")
                return list.count
            }
            #expect(count == 2)
            #expect(Defaults[key] == ["a", "b"])
        }

        struct Refusal: Error {}

        @Test(arguments: SuiteKind.withFileSuite)
        func aThrowingBodyStoresNothing(kind: SuiteKind) {
            let suite = kind.make()
            let key = Defaults.Key<Int>("n\(UUID().uuidString.prefix(8))", default: 1, suite: suite)
            #expect(throws: Refusal.self) {
                try Defaults.modify(key) { value in
                    value = 5
                    throw Refusal()
                }
            }
            #expect(Defaults[key] == 1)
            #expect(suite.persistentValues()[key.name] == nil)
        }

        /// The README's example, in a file suite of its own.
        @Test func readmeExample() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite()
            let launchCount = Defaults.Key<Int>("launchCount", default: 0, suite: suite)
            let tags = Defaults.Key<[String]>("tags", default: [], suite: suite)
            Defaults.modify(launchCount) { $0 += 1 }
            let tagCount = Defaults.modify(tags) { tags in
                tags.append("new")
                return tags.count
            }
            #expect(Defaults[launchCount] == 1)
            #expect(tagCount == 1)
            #expect(try directory.storedValues()["tags"] as? [String] == ["new"])
        }

        @Test func modifyWritesBeforeReturning() throws {
            let directory = try FileSuiteTemporaryDirectory()
            let suite = directory.suite(coalescingDelay: .seconds(3600))
            let key = Defaults.Key<Int?>("optional", suite: suite)
            Defaults.modify(key) { $0 = 3 }
            #expect(try directory.storedValues()["optional"] as? Int == 3)
            Defaults.modify(key) { $0 = nil }
            #expect(try directory.storedValues()["optional"] == nil)
        }
    }
}
