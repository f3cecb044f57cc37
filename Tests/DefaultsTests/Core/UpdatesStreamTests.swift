import Defaults
import Foundation
import Testing

/// The `AsyncStream` form of `updates`, for code that names the type Defaults returns: it stops
/// observing when its task is cancelled or it is dropped, and ordinary loops keep getting
/// `Defaults.Updates`.
@Suite("updates as an AsyncStream")
struct UpdatesStreamTests {
    @Test(arguments: SuiteKind.withFileSuite)
    func droppingTheStreamStopsObserving(kind: SuiteKind) {
        let suite = kind.make()
        let key = Defaults.Key<Int>("dropped_updatesStream", default: 0, suite: suite)
        do {
            let stream: AsyncStream<Int> = Defaults.updates(key)
            #expect(suite.changes.observerCount == 1)
            withExtendedLifetime(stream) {}
        }
        #expect(suite.changes.observerCount == 0)
    }

    @Test(arguments: SuiteKind.withFileSuite)
    func cancellingTheLoopStopsObserving(kind: SuiteKind) async throws {
        let suite = kind.make()
        let key = Defaults.Key<Int>("cancelled_updatesStream", default: 0, suite: suite)
        let stream: AsyncStream<Int> = Defaults.updates(key, initial: false)
        let task = Task {
            var seen: [Int] = []
            for await value in stream {
                seen.append(value)
            }
            return seen
        }
        Defaults[key] = 1
        Defaults[key] = 2
        #expect(suite.changes.observerCount == 1)
        task.cancel()
        _ = await task.value
        #expect(suite.changes.observerCount == 0)
    }

    @Test func aLoopThatDoesNotNameTheTypeGetsUpdates() {
        let key = Defaults.Key<Int>("plain_updatesStream", default: 0, suite: InMemorySuite())
        let updates = Defaults.updates(key)
        #expect(type(of: updates) == Defaults.Updates<Int>.self)
        let values = Defaults.updates(key).map { $0 + 1 }
        #expect(type(of: values) == AsyncMapSequence<Defaults.Updates<Int>, Int>.self)
    }

    @Test(arguments: SuiteKind.allCases)
    func aNonSendableValueArrivesAsItsOwnInstance(kind: SuiteKind) async {
        let key = Defaults.Key<Basket>("basket_updatesStream", default: Basket(items: []), suite: kind.make())
        let stream: AsyncStream<Basket> = Defaults.updates(key, initial: false)
        Defaults[key] = Basket(items: [1, 2])
        var received: Basket?
        for await basket in stream {
            received = basket
            break
        }
        #expect(received?.items == [1, 2])
        received?.items.append(3)
        #expect(Defaults[key].items == [1, 2])
    }
}

/// A value that is not `Sendable`.
private final class Basket: Codable, Defaults.Serializable {
    var items: [Int]

    init(items: [Int]) {
        self.items = items
    }
}
