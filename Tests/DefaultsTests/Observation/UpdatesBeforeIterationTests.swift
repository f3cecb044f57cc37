import Defaults
import Foundation
import TestSupport
import Testing

extension ObservationTests {
    /// A sequence observes from its creation: a change made after `updates` returns but before the
    /// loop starts is buffered and delivered, in every form of `updates`.
    @Suite("updates before iteration")
    struct UpdatesBeforeIterationTests {
        @Test(arguments: ObservedSuiteKind.allCases)
        func oneKeyWithoutInitial(kind: ObservedSuiteKind) async {
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: kind.make())
            let updates = Defaults.updates(key, initial: false)
            Defaults[key] = 1
            #expect(await firstElements(2, of: updates, after: { Defaults[key] = 2 }) == [1, 2])
        }

        @Test(arguments: ObservedSuiteKind.allCases)
        func oneKeyWithInitial(kind: ObservedSuiteKind) async {
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: kind.make())
            let updates = Defaults.updates(key)
            Defaults[key] = 1
            #expect(await firstElements(3, of: updates, after: { Defaults[key] = 2 }) == [0, 1, 2])
        }

        @Test(arguments: ObservedSuiteKind.allCases, [false, true])
        func changesOfOneKey(kind: ObservedSuiteKind, initial: Bool) async {
            let key = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: kind.make())
            let changes = Defaults.changes(key, initial: initial).map { change in
                "\(change.isInitial ? "initial" : "update") \(change.oldValue)→\(change.newValue)"
            }
            Defaults[key] = 1
            let expected = (initial ? ["initial 0→0"] : []) + ["update 0→1", "update 1→2"]
            #expect(await firstElements(expected.count, of: changes, after: { Defaults[key] = 2 }) == expected)
        }

        @Test(arguments: ObservedSuiteKind.allCases, [false, true])
        func keyArray(kind: ObservedSuiteKind, initial: Bool) async {
            let suite = kind.make()
            let first = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let second = Defaults.Key<String>(uniqueKeyName(), default: "a", suite: suite)
            let updates = Defaults.updates([first, second], initial: initial)
            Defaults[second] = "b"
            // Each element reads the keys when it is taken; the count shows none was lost or doubled.
            let mapped = updates.map { "\(Defaults[first]) \(Defaults[second])" }
            let count = initial ? 3 : 2
            let elements = await firstElements(count, of: mapped, after: { Defaults[first] = 1 })
            #expect(elements?.count == count)
            #expect(elements?.last == "1 b")
        }

        @Test(arguments: ObservedSuiteKind.allCases, [false, true])
        func variadicKeys(kind: ObservedSuiteKind, initial: Bool) async {
            let suite = kind.make()
            let first = Defaults.Key<Int>(uniqueKeyName(), default: 0, suite: suite)
            let second = Defaults.Key<String>(uniqueKeyName(), default: "a", suite: suite)
            let updates = Defaults.updates(first, second, initial: initial).map { "\($0) \($1)" }
            Defaults[second] = "b"
            let expected = (initial ? ["0 a"] : []) + ["0 b", "1 b"]
            #expect(await firstElements(expected.count, of: updates, after: { Defaults[first] = 1 }) == expected)
        }

        /// The path a change by another process takes (the file watcher, then a reload), shown in
        /// this process with a second suite on the same file.
        @Test func fileChangedThroughAnotherSuiteObject() async throws {
            let name = "swift-defaults-tests-\(UUID().uuidString)"
            let suite = FileSuite(name: name, directory: ObservationFiles.directory, arguments: [])
            let writer = FileSuite(name: name, directory: ObservationFiles.directory, arguments: [])
            let keyName = uniqueKeyName()
            let key = Defaults.Key<Int>(keyName, default: 0, suite: suite)
            let updates = Defaults.updates(key, initial: false)
            writer[Defaults.Key<Int>(keyName, default: 0, suite: writer)] = 5
            try writer.flush()
            // The watcher has reloaded the file before the loop starts.
            try await waitUntil { Defaults[key] == 5 }
            #expect(await firstElements(1, of: updates) == [5])
        }

        @Test func fileChangedByAnotherProcess() async throws {
            let name = "swift-defaults-tests-\(UUID().uuidString)"
            let suite = FileSuite(name: name, directory: ObservationFiles.directory, arguments: [])
            let key = Defaults.Key<Int>("counter", default: 0, suite: suite)
            let updates = Defaults.updates(key, initial: false)
            let result = try TestHelper.run([
                "observation-write", ObservationFiles.directory.path, name, "counter", "42",
            ])
            #expect(result.status == 0, "\(result.error)")
            try await waitUntil { Defaults[key] == 42 }
            #expect(await firstElements(1, of: updates) == [42])
        }
    }
}

/// Iterates `sequence` until `count` elements arrived, running `after` once the loop has taken
/// its first element or is waiting for one; `nil` if they did not all arrive in time.
private func firstElements<Elements: AsyncSequence & Sendable>(
    _ count: Int,
    of sequence: Elements,
    after: @escaping @Sendable () -> Void = {}
) async -> [Elements.Element]? where Elements.Element: Sendable {
    try? await withTimeout {
        var elements: [Elements.Element] = []
        var iterator = sequence.makeAsyncIterator()
        while elements.count < count, let element = try await iterator.next() {
            elements.append(element)
            if elements.count == 1 {
                after()
            }
        }
        return elements.count == count ? elements : nil
    }
}
