import Defaults
import Foundation
import Testing

extension Trust {
    /// Item 8: what Defaults accepts with a warning never stops the program here either.
    @Suite struct KeyProblemTests {
        /// In a child process, so that a trap fails this test instead of stopping the test run.
        @Test func keyNamesBreakingTheRulesDoNotStopTheProgram() async {
            await #expect(processExitsWith: .success) {
                let suite = InMemorySuite()
                let dotted = Defaults.Key<Int>("has.dot", default: 1, suite: suite)
                let at = Defaults.Key<String>("@leading", default: "", suite: suite)
                Defaults[dotted] = 2
                Defaults[at] = "x"
                guard Defaults[dotted] == 2, Defaults[at] == "x" else { exit(1) }
            }
        }

        @Test func keyNameProblemsAreListed() {
            let name = "trust.dotted\(UUID().uuidString.prefix(8))"
            let key = Defaults.Key<Int>(name, default: 0, suite: InMemorySuite())
            #expect(Defaults.KeyRegistry.nameProblems.contains { $0.name == name && $0.rule == .containsDot })
            Defaults[key] = 4
            #expect(Defaults[key] == 4)
        }

        @Test func sameNameWithAnotherTypeDoesNotStopTheProgram() async {
            await #expect(processExitsWith: .success) {
                let suite = InMemorySuite(name: "retyped")
                let old = Defaults.Key<Int>("setting", default: 0, suite: suite)
                let new = Defaults.Key<String>("setting", default: "", suite: suite)
                Defaults[old] = 5
                // Each reads the other's value as its default.
                guard Defaults[new] == "", Defaults.KeyRegistry.conflicts(in: suite).count == 1 else { exit(1) }
            }
        }
    }
}
