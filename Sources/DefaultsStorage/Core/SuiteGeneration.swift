import Synchronization

/// Numbers each state of a suite's values, so that a key can keep the value it decoded last and
/// tell with one atomic load whether it is still current (``DefaultsSuite/valueGeneration``).
///
/// ``SuiteDomains`` advances it on every change to any of its domains, inside the suite's lock,
/// after the change. Numbers are drawn from one process-wide counter, so no two states of any
/// suites ever share a number: a number names the suite as well as its state, and a key read
/// through another suite, or a suite whose domains were replaced as a whole, cannot match a
/// value cached for another state by accident.
final class SuiteGeneration: Sendable {
    private static let counter = Atomic<UInt64>(0)
    private let current: Atomic<UInt64>

    init() {
        current = Atomic(Self.next())
    }

    /// The number of the current state. A reader loads it before reading the values.
    var value: UInt64 {
        current.load(ordering: .acquiring)
    }

    /// Gives the values a new number; called after every change, under the suite's lock.
    func advance() {
        current.store(Self.next(), ordering: .releasing)
    }

    private static func next() -> UInt64 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
