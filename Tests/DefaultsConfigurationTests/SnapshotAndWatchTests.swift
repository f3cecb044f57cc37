import Configuration
import Defaults
import DefaultsConfiguration
import Foundation
import TestSupport
import Testing

@Suite("DefaultsProvider snapshots and watching", .mayBlock)
struct DefaultsProviderSnapshotAndWatchTests {
    @Test("A snapshot keeps the values of its moment")
    func snapshot() throws {
        let suite = InMemorySuite(name: "snapshot-\(UUID().uuidString)")
        suite.set(["host": "one", "port": 1], forKey: "db")
        let config = ConfigReader(provider: DefaultsProvider(suite: suite))
        let snapshot = config.snapshot()
        suite.set(["host": "two", "port": 2], forKey: "db")
        #expect(snapshot.string(forKey: "db.host") == "one")
        #expect(snapshot.int(forKey: "db.port") == 1)
        #expect(config.string(forKey: "db.host") == "two")
        #expect(config.snapshot().int(forKey: "db.port") == 2)
    }

    @Test("watchSnapshot sees a write of this process, and stops observing when it returns")
    func watchSnapshotInProcess() async throws {
        let suite = InMemorySuite(name: "watch-snapshot-\(UUID().uuidString)")
        suite.set("a", forKey: "mode")
        let provider = DefaultsProvider(suite: suite)
        let seen = try await withTimeout {
            try await provider.watchSnapshot { updates in
                var seen: [String?] = []
                for await snapshot in updates {
                    let mode = try snapshot.value(forKey: ["mode"], type: .string).value?.content
                    seen.append(mode.flatMap { if case .string(let text) = $0 { text } else { nil } })
                    if seen.count == 1 { suite.set("b", forKey: "mode") }
                    if seen.last == "b" { break }
                }
                return seen
            }
        }
        #expect(seen == ["a", "b"])
        #expect(suite.changes.observerCount == 0)
    }

    @Test("watchValue reports a value that does not convert, then the next one that does")
    func watchValueReportsMismatch() async throws {
        let suite = InMemorySuite(name: "watch-value-\(UUID().uuidString)")
        suite.set(1, forKey: "watched")
        let provider = DefaultsProvider(suite: suite)
        let seen = try await withTimeout {
            try await provider.watchValue(forKey: ["watched"], type: .int) { updates in
                var seen: [String] = []
                for await result in updates {
                    switch result {
                    case .success(let lookup): seen.append(lookup.value.map { "\($0.content)" } ?? "nil")
                    case .failure(let error): seen.append("\(error)")
                    }
                    // Each write waits for the update before it, so none is coalesced.
                    switch seen.count {
                    case 1: suite.set("text", forKey: "watched")
                    case 2: suite.set(2, forKey: "watched")
                    case 3: suite.set(nil, forKey: "watched")
                    default: return seen
                    }
                }
                return seen
            }
        }
        #expect(
            seen == [
                "int(1)", DefaultsProviderError.valueNotConvertible(key: "watched", type: .int).description, "int(2)",
                "nil",
            ])
    }

    @Test("A ConfigReader watch sees a change made by another process (the defaults command)")
    func watchSeesAnotherProcess() async throws {
        let sandbox = try ProviderSandbox()
        let suite = sandbox.suite()
        suite.set(["timeout": 5], forKey: "http")
        try suite.flush()
        let config = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: [:]),
            DefaultsProvider(suite: suite),
        ])
        let seen = try await withTimeout {
            try await config.watchInt(forKey: "http.timeout", default: 30) { updates in
                var seen: [Int] = []
                for await timeout in updates {
                    seen.append(timeout)
                    if seen.count == 1 {
                        try sandbox.runDefaults("write", sandbox.name, "http", "-dict", "timeout", "-int", "9")
                    }
                    if timeout == 9 { break }
                }
                return seen
            }
        }
        #expect(seen.first == 5)
        #expect(seen.last == 9)
        #expect(suite.changes.observerCount == 0)
    }
}
