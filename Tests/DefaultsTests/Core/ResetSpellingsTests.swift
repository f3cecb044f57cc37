import Defaults
import Foundation
import Testing

/// Defaults' spellings of `reset` that name a `UserDefaults` suite.
@Suite("Reset spellings")
struct ResetSpellingsTests {
    @Test func keysGivenByNameAreResetInTheNamedUserDefaults() throws {
        let suite = try #require(SuiteKind.userDefaults.make() as? UserDefaultsSuite)
        let first = Defaults.Key<Int>("first_resetSpellings", default: 1, suite: suite.userDefaults)
        let second = Defaults.Key<Int>("second_resetSpellings", default: 2, suite: suite.userDefaults)
        let kept = Defaults.Key<Int>("kept_resetSpellings", default: 3, suite: suite.userDefaults)
        Defaults[first] = 10
        Defaults[second] = 20
        Defaults[kept] = 30
        Defaults.reset(["first_resetSpellings", "second_resetSpellings"], suite: suite.userDefaults)
        #expect(Defaults[first] == 1)
        #expect(Defaults[second] == 2)
        #expect(Defaults[kept] == 30)
        #expect(suite.userDefaults.object(forKey: "first_resetSpellings") as? Int == 1)
    }

    @Test(arguments: SuiteKind.allCases)
    func typedKeysWithASuiteAreResetInTheirOwnSuites(kind: SuiteKind) {
        let suite = kind.make()
        let number = Defaults.Key<Int>("number_resetSpellings", default: 1, suite: suite)
        let text = Defaults.Key<String?>("text_resetSpellings", suite: suite)
        let kept = Defaults.Key<Bool>("kept_resetSpellings", default: false, suite: suite)
        Defaults[number] = 5
        Defaults[text] = "five"
        Defaults[kept] = true
        // As in Defaults, `suite` does not move the reset: each key is reset where it is stored.
        Defaults.reset(number, text, suite: .standard)
        #expect(Defaults[number] == 1)
        #expect(Defaults[text] == nil)
        #expect(Defaults[kept])
        #expect(suite.persistentValues().keys.sorted() == ["kept_resetSpellings"])
    }
}
