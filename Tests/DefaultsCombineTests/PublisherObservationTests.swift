import Defaults
import DefaultsCombine
import Foundation
import Synchronization
import Testing

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

/// `Defaults.publisher`, on every kind of suite. Named so that `--filter Observation` selects it.
@Suite("Observation: publishers")
struct PublisherObservationTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case inMemory
        case userDefaults
        case file

        var testDescription: String { rawValue }

        func make() -> any DefaultsSuite {
            let name = "swift-defaults-combine-tests-\(UUID().uuidString)"
            _ = Self.directory  // installs the clean-up at exit
            switch self {
            case .inMemory:
                return InMemorySuite(name: name)
            case .userDefaults:
                guard let defaults = UserDefaults(suiteName: name) else { return InMemorySuite(name: name) }
                Self.userDefaultsNames.withLock { $0.append(name) }
                return UserDefaultsSuite.shared(defaults, name: name)
            case .file:
                return FileSuite(name: name, directory: Self.directory, arguments: [])
            }
        }

        /// Where the file-backed suites live: `<tmp>/swift-defaults-combine-tests/<pid>`, removed
        /// with the `UserDefaults` suites at exit (and, if a background write recreated it while the
        /// process exited, at the next start).
        static let directory: URL = {
            let root = FileManager.default.temporaryDirectory
                .appendingPathComponent("swift-defaults-combine-tests", isDirectory: true)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] {
                if let pid = Int32(name), kill(pid, 0) != 0, errno == ESRCH {
                    try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
                }
            }
            atexit {
                // Write what is pending first, so that as little as possible recreates files afterwards.
                try? Defaults.flushAll()
                try? FileManager.default.removeItem(at: Kind.directory)
                for name in Kind.userDefaultsNames.withLock({ $0 }) {
                    UserDefaults.standard.removePersistentDomain(forName: name)
                    UserDefaults(suiteName: name)?.synchronize()
                    // Foundation on Linux keeps the emptied file.
                    try? FileManager.default.removeItem(at: FileSuite.fileURL(forName: name))
                }
            }
            return root.appendingPathComponent("\(getpid())", isDirectory: true)
        }()

        static let userDefaultsNames = Mutex<[String]>([])
    }

    final class Recorder<Value: Sendable>: Sendable {
        private let storage = Mutex<[Value]>([])
        func append(_ value: Value) { storage.withLock { $0.append(value) } }
        var values: [Value] { storage.withLock { $0 } }
    }

    struct Seen: Equatable, Sendable {
        var old: Int
        var new: Int
    }

    static func key(in suite: any DefaultsSuite, default value: Int = 0) -> Defaults.Key<Int> {
        Defaults.Key<Int>("key\(UUID().uuidString.prefix(8))", default: value, suite: suite)
    }

    @Test(arguments: Kind.allCases)
    func sendsTheInitialValueThenEachChange(kind: Kind) {
        let suite = kind.make()
        let key = Self.key(in: suite, default: 1)
        let recorder = Recorder<Seen>()
        let cancellable = Defaults.publisher(key).sink { recorder.append(Seen(old: $0.oldValue, new: $0.newValue)) }
        // Sent synchronously: on subscription, then on the thread that writes.
        #expect(recorder.values == [Seen(old: 1, new: 1)])
        Defaults[key] = 2
        Defaults[key] = 2
        suite[key] = 3
        key.reset()
        Defaults[key] = 4
        Defaults.reset(key)
        Defaults[key] = 5
        Defaults.reset(key.name, suite: suite)
        Defaults[key] = 6
        Defaults.removeAll(suite: suite)
        #expect(
            recorder.values == [
                Seen(old: 1, new: 1), Seen(old: 1, new: 2), Seen(old: 2, new: 3), Seen(old: 3, new: 1),
                Seen(old: 1, new: 4), Seen(old: 4, new: 1), Seen(old: 1, new: 5), Seen(old: 5, new: 1),
                Seen(old: 1, new: 6), Seen(old: 6, new: 1),
            ])
        cancellable.cancel()
    }

    @Test(arguments: Kind.allCases)
    func withoutInitialOnlyChanges(kind: Kind) {
        let suite = kind.make()
        let key = Self.key(in: suite)
        let recorder = Recorder<Int>()
        let cancellable = Defaults.publisher(key, options: []).map(\.newValue).sink { recorder.append($0) }
        #expect(recorder.values.isEmpty)
        Defaults[key] = 7
        #expect(recorder.values == [7])
        cancellable.cancel()
    }

    @Test(arguments: Kind.allCases)
    func optionalKeyPublishesNilOnRemoval(kind: Kind) {
        let suite = kind.make()
        let key = Defaults.Key<String?>("optional\(UUID().uuidString.prefix(8))", suite: suite)
        let recorder = Recorder<String?>()
        let cancellable = Defaults.publisher(key, options: []).sink { recorder.append($0.newValue) }
        Defaults[key] = "a"
        key.reset()
        #expect(recorder.values == ["a", nil])
        cancellable.cancel()
    }

    @Test(arguments: Kind.allCases)
    func cancellingRemovesTheObserver(kind: Kind) {
        let suite = kind.make()
        let key = Self.key(in: suite)
        let recorder = Recorder<Int>()
        weak var weakRecorder: Recorder<Int>?
        var cancellable: AnyCancellable?
        do {
            let captured = Recorder<Int>()
            weakRecorder = captured
            cancellable = Defaults.publisher(key).sink {
                captured.append($0.newValue)
                recorder.append($0.newValue)
            }
        }
        #expect(suite.changes.observerCount == 1)
        cancellable?.cancel()
        #expect(suite.changes.observerCount == 0)
        Defaults[key] = 1
        #expect(recorder.values == [0])
        // Dropping an AnyCancellable cancels too, and nothing keeps the subscriber's captures.
        cancellable = Defaults.publisher(key).sink { recorder.append($0.newValue) }
        #expect(suite.changes.observerCount == 1)
        cancellable = nil
        #expect(suite.changes.observerCount == 0)
        #expect(weakRecorder == nil)
        withExtendedLifetime(cancellable) {}
    }

    @Test(arguments: Kind.allCases)
    func severalKeys(kind: Kind) {
        let suite = kind.make()
        let other = InMemorySuite()
        let first = Self.key(in: suite)
        let second = Self.key(in: other)
        let calls = Atomic(0)
        let cancellable = Defaults.publisher(keys: first, second).sink { calls.add(1, ordering: .relaxed) }
        #expect(calls.load(ordering: .relaxed) == 1)
        Defaults[first] = 1
        Defaults[second] = 1
        Defaults[second] = 1
        #expect(calls.load(ordering: .relaxed) == 3)
        cancellable.cancel()
        #expect(suite.changes.observerCount == 0)
        #expect(other.changes.observerCount == 0)

        let withoutInitial = Defaults.publisher(keys: [first], options: []).sink { calls.add(1, ordering: .relaxed) }
        #expect(calls.load(ordering: .relaxed) == 3)
        Defaults.removeAll(suite: suite)
        #expect(calls.load(ordering: .relaxed) == 4)
        withoutInitial.cancel()
    }

    @Test(arguments: Kind.allCases)
    func withoutPropagationPublishesNothing(kind: Kind) {
        let suite = kind.make()
        let key = Self.key(in: suite)
        let recorder = Recorder<Int>()
        let cancellable = Defaults.publisher(key, options: []).sink { recorder.append($0.newValue) }
        Defaults.withoutPropagation {
            Defaults[key] = 1
        }
        Defaults[key] = 2
        #expect(recorder.values == [2])
        cancellable.cancel()
    }

    /// A subscriber that asks for one value at a time only gets what it asked for.
    @Test func respectsDemand() {
        let suite = InMemorySuite()
        let key = Self.key(in: suite)
        let recorder = Recorder<Int>()
        final class Holder {
            var subscription: (any Subscription)?
        }
        let holder = Holder()
        let subscriber = AnySubscriber<Defaults.KeyChange<Int>, Never>(
            receiveSubscription: { received in
                holder.subscription = received
                received.request(.max(1))
            },
            receiveValue: { change in
                recorder.append(change.newValue)
                return .none
            },
            receiveCompletion: { _ in }
        )
        Defaults.publisher(key).subscribe(subscriber)
        Defaults[key] = 1
        #expect(recorder.values == [0])
        holder.subscription?.request(.max(1))
        Defaults[key] = 2
        Defaults[key] = 3
        #expect(recorder.values == [0, 2])
        holder.subscription?.cancel()
        #expect(suite.changes.observerCount == 0)
    }
}
