import Defaults
import Foundation
import Testing

/// State that is not `Sendable`, read by dynamic defaults.
private final class Screen {
    var width = 800
}

private let layoutSuite = InMemorySuite(name: "dynamic-default-closures")

private enum Layout: Defaults.KeyGroup {
    static let namespace = "layout"
    static var suite: any DefaultsSuite { layoutSuite }
}

/// Every initializer of a key with a dynamic default takes a closure that need not be `Sendable`
/// (as Defaults' does), and calls it on each read of a missing value.
@Suite("Dynamic default closures")
struct DynamicDefaultClosureTests {
    @Test(arguments: SuiteKind.allCases)
    func aClosureOverNonSendableStateIsCalledOnEachRead(kind: SuiteKind) throws {
        let screen = Screen()
        let suite = kind.make()
        let width = Defaults.Key<Int>("width_dynamicClosure", suite: suite, iCloud: false) { screen.width }
        #expect(Defaults[width] == 800)
        screen.width = 1024
        #expect(Defaults[width] == 1024)
        Defaults[width] = 640
        screen.width = 2048
        #expect(Defaults[width] == 640)
        width.reset()
        #expect(Defaults[width] == 2048)

        // In another suite, the same closure.
        let moved = width.in(InMemorySuite())
        screen.width = 300
        #expect(Defaults[moved] == 300)
    }

    @Test func aUserDefaultsKeyTakesTheSameClosure() throws {
        let suite = try #require(SuiteKind.userDefaults.make() as? UserDefaultsSuite)
        let screen = Screen()
        let half = Defaults.Key<Int>("half_dynamicClosure", suite: suite.userDefaults) { screen.width / 2 }
        #expect(Defaults[half] == 400)
        screen.width = 100
        #expect(Defaults[half] == 50)
    }

    @Test func aKeyGroupKeyTakesTheSameClosure() {
        let screen = Screen()
        let columns = Layout.key("columns_dynamicClosure") { screen.width / 100 }
        #expect(Defaults[columns] == 8)
        screen.width = 1200
        #expect(Defaults[columns] == 12)
        #expect(columns.name == "layout:columns_dynamicClosure")
    }
}
