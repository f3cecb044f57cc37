import Defaults
import Foundation
import Synchronization
import TestSupport
import Testing

private enum Mime: String, Defaults.Serializable {
    case json = "application/json"
    case stream = "application/octet-stream"
}

private struct Item: Hashable {
    let name: String
    let count: UInt
}

extension Item: Defaults.Serializable {
    static let bridge = ItemBridge()
}

private struct ItemBridge: Defaults.Bridge {
    typealias Value = Item
    typealias Serializable = [String: String]

    func serialize(_ value: Value?) -> Serializable? {
        guard let value else {
            return nil
        }
        return ["name": value.name, "count": String(value.count)]
    }

    func deserialize(_ object: Serializable?) -> Value? {
        guard let object, let name = object["name"], let count = UInt(object["count"] ?? "0") else {
            return nil
        }
        return Value(name: name, count: count)
    }
}

// A custom bridge whose stored form is built from `Codable` parts: Defaults stores each part as
// its own bridge does (a JSON string).
struct PlainHourMinuteTime: Hashable, Codable, Defaults.Serializable {
    var hour: Int
    var minute: Int
}

struct PlainHourMinuteTimeRange: Hashable, Codable {
    var start: PlainHourMinuteTime
    var end: PlainHourMinuteTime
}

extension PlainHourMinuteTimeRange: Defaults.Serializable {
    struct Bridge: Defaults.Bridge {
        typealias Value = PlainHourMinuteTimeRange
        typealias Serializable = [PlainHourMinuteTime]

        func serialize(_ value: Value?) -> Serializable? {
            guard let value else {
                return nil
            }
            return [value.start, value.end]
        }

        func deserialize(_ object: Serializable?) -> Value? {
            guard let array = object, array.count == 2 else {
                return nil
            }
            return .init(start: array[0], end: array[1])
        }
    }

    static let bridge = Bridge()
}

@Suite("Public-API uses of Defaults", .mayBlock)
struct PublicAPIUsesTests {
    let suite = makeSuite()

    @Test func aSetOfAnySerializable() {
        let key = Defaults.Key<Set<Defaults.AnySerializable>>("anySet", default: [123], suite: suite)
        #expect(Defaults[key].first == 123)
        Defaults[key].insert(12_131.4)
        #expect(Defaults[key].contains(12_131.4))
        let date = Defaults.AnySerializable(Date())
        Defaults[key].insert(date)
        #expect(Defaults[key].contains(date))
        let data = Defaults.AnySerializable("Hello World!".data(using: .utf8))
        Defaults[key].insert(data)
        let mime = Defaults.AnySerializable(Mime.json)
        Defaults[key].insert(mime)
        let array: Defaults.AnySerializable = [1, 2, 3, 4]
        Defaults[key].insert(array)
        let dictionary: Defaults.AnySerializable = ["Hello": "World!"]
        Defaults[key].insert(dictionary)
        let item = Defaults.AnySerializable(Item(name: "Apple", count: 10))
        Defaults[key].insert(item)
        Defaults[key].insert(123)
        #expect(Defaults[key] == [123, 12_131.4, date, data, mime, array, dictionary, item])
        #expect(Defaults[key].count == 8)
    }

    @Test func aSetOfACustomBridgedType() {
        let apple = Item(name: "Apple", count: 10)
        let banana = Item(name: "Banana", count: 20)
        let key = Defaults.Key<Set<Item>>("itemSet", default: [apple], suite: suite)
        Defaults[key].insert(apple)
        #expect(Defaults[key] == [apple])
        Defaults[key].insert(banana)
        #expect(Defaults[key] == [apple, banana])
        let optional = Defaults.Key<Set<Item>?>("optionalItemSet", suite: suite)
        Defaults[optional] = [apple]
        Defaults[optional]?.insert(banana)
        #expect(Defaults[optional] == [apple, banana])
    }

    @Test func anySerializableSetsAndGetsEveryIntegerWidth() {
        let any = Defaults.Key<Defaults.AnySerializable>("any", default: 121_314, suite: suite)
        #expect(Defaults[any] == 121_314)
        Defaults[any].set(Int8.max)
        #expect(Defaults[any].get() == Int8.max)
        Defaults[any].set(Int16.max)
        #expect(Defaults[any].get() == Int16.max)
        Defaults[any].set(Int32.max)
        #expect(Defaults[any].get() == Int32.max)
        Defaults[any].set(Int64.max)
        #expect(Defaults[any].get() == Int64.max)
        Defaults[any].set(Int.min)
        #expect(Defaults[any].get() == Int.min)
        Defaults[any].set(UInt8.max)
        #expect(Defaults[any].get() == UInt8.max)
        Defaults[any].set(UInt16.max)
        #expect(Defaults[any].get() == UInt16.max)
        Defaults[any].set(UInt32.max)
        #expect(Defaults[any].get() == UInt32.max)
        Defaults[any].set(UInt64.max)
        #expect(Defaults[any].get() == UInt64.max)
        Defaults[any].set(UInt.max)
        #expect(Defaults[any].get(UInt.self) == UInt.max)
        Defaults[any].set(12_131.456, type: Float.self)
        #expect(Defaults[any].get(Float.self) == 12_131.456)
        Defaults[any] = nil
        #expect(Defaults[any] == 121_314)
    }

    @Test func oneKeyObservedFromManyTasksAtOnce() async throws {
        let key = Defaults.Key<Int>("counter", default: 0, suite: suite)
        let last = 50
        // What each `observe` handler was told last, by observer.
        let observed = LastValues(count: 20)
        var observations: [Defaults.Observation] = []
        var consumersThatSawLast = 0
        // At once: 20 tasks start observing, 50 tasks iterate `updates` until they see the last
        // value, and 50 tasks write 1...50 in any order.
        await withTaskGroup(of: ManyTasksOutcome.self) { group in
            for index in 0..<20 {
                group.addTask {
                    .observing(
                        Defaults.observe(key) { change in
                            observed.set(change.newValue, at: index)
                        })
                }
            }
            for _ in 0..<50 {
                group.addTask {
                    for await value in Defaults.updates(key) where value == last {
                        return .sawLast
                    }
                    return .ended
                }
            }
            for value in 1...last {
                group.addTask {
                    Defaults[key] = value
                    return .wrote
                }
            }
            var writes = 0
            for await outcome in group {
                switch outcome {
                case .observing(let observation): observations.append(observation)
                case .sawLast: consumersThatSawLast += 1
                case .ended: break
                case .wrote:
                    writes += 1
                    // Once every write is done, the key ends on the last value.
                    if writes == last { Defaults[key] = last }
                }
            }
        }
        #expect(consumersThatSawLast == 50)
        try await waitUntil("every observer was told the last value") {
            observed.all.allSatisfy { $0 == last }
        }
        #expect(observations.count == 20)
        #expect(observations.allSatisfy { $0.isValid })
    }

    @Test func aBridgeBuiltFromCodablePartsStoresWhatDefaultsStores() throws {
        let start = PlainHourMinuteTime(hour: 1, minute: 0)
        let end = PlainHourMinuteTime(hour: 2, minute: 0)
        let range = PlainHourMinuteTimeRange(start: start, end: end)
        let key = Defaults.Key<PlainHourMinuteTimeRange>("timeRange", default: range, suite: suite)
        #expect(Defaults[key] == range)
        let rawValue = try #require(suite.object(forKey: key.name) as? [String])
        #expect(rawValue == [#"{"hour":1,"minute":0}"#, #"{"hour":2,"minute":0}"#])

        let next = PlainHourMinuteTimeRange(
            start: PlainHourMinuteTime(hour: 3, minute: 58), end: PlainHourMinuteTime(hour: 4, minute: 59))
        Defaults[key] = next
        #expect(Defaults[key] == next)
        let nextRawValue = try #require(suite.array(forKey: key.name) as? [String])
        #expect(nextRawValue == [#"{"hour":3,"minute":58}"#, #"{"hour":4,"minute":59}"#])
    }
}

/// What one task of ``PublicAPIUsesTests/oneKeyObservedFromManyTasksAtOnce()`` did.
private enum ManyTasksOutcome: Sendable {
    case observing(Defaults.Observation)
    case sawLast
    case ended
    case wrote
}

/// The value each of several observers was told last.
private final class LastValues: Sendable {
    private let values: Mutex<[Int?]>

    init(count: Int) {
        values = Mutex(Array(repeating: nil, count: count))
    }

    var all: [Int?] { values.withLock { $0 } }

    func set(_ value: Int, at index: Int) {
        values.withLock { $0[index] = value }
    }
}
