import DefaultsPropertyList
import Foundation

/// A place that holds property-list values by key and tells you when they change.
///
/// Everything in the library reads and writes through a suite: ``Defaults/Key`` values,
/// observation, snapshots and the `defaults` command. Values are property-list objects:
/// `String`, `Int`, `UInt64` (above `Int.max`), `Double`, `Bool`, `Date`, `Data`, `[Any]` and
/// `[String: Any]`.
///
/// A read resolves through the suite's domains in order, as `UserDefaults` does: launch
/// arguments (where the suite supports them), the persistent values, then the registered defaults.
///
/// Conforming types:
/// - ``FileSuite``: the Linux default, a durable file in Foundation's location and format.
/// - ``UserDefaultsSuite``: Foundation's `UserDefaults` (the default on Apple platforms).
/// - ``InMemorySuite``: values that live only in memory, for tests and previews.
public protocol DefaultsSuite: AnyObject, Sendable {
    /// The suite's name, as Foundation would use it (for example `com.example.app`).
    var name: String { get }

    /// The value a read of `key` returns: from the launch arguments, the persistent values or the
    /// registered defaults, in that order; `nil` if no domain has one.
    func object(forKey key: String) -> Any?

    /// Stores `object` as the persistent value of `key`, or removes it when `object` is `nil`.
    ///
    /// Observers of ``changes`` are told about `key` when the value a read returns changed.
    func set(_ object: Any?, forKey key: String)

    /// Stores several values as one change: each `object` becomes the persistent value of its
    /// `key`, or removes it when `nil` (for a key given twice, the last one wins).
    ///
    /// Observers of ``changes`` are told once, with every key whose read value changed, rather
    /// than once per key; ``Defaults/SnapshotStore/write(_:)`` builds its transactions on this.
    /// Suites that can apply the values under one lock do, so that no reader sees some of them
    /// without the others, and store them with one write.
    ///
    /// A default implementation, for suites that do not provide their own, sets the values one by
    /// one without telling observers and then posts one change; readers on other threads may see
    /// the values arrive one at a time.
    func setValues(_ changes: [(key: String, object: Any?)])

    /// Removes every persistent value. Registered defaults and launch arguments stay.
    func removeAll()

    /// Reads the value of `key` (as ``object(forKey:)`` resolves it), lets `body` change it, and
    /// stores the result as the persistent value (`nil` removes it), as one step.
    ///
    /// ``FileSuite`` holds its cross-process lock from the read to the write, so that increments
    /// made at once by several processes are all kept. A default implementation, for suites that
    /// do not provide their own, reads, calls `body` and writes; it is as atomic as the suite's
    /// own reads and writes.
    ///
    /// `body` may read and write the suite, but must not flush it or modify it again. When it
    /// throws, nothing is stored.
    func modify<Result, Failure: Error>(
        forKey key: String, _ body: (inout Any?) throws(Failure) -> Result
    ) throws(Failure) -> Result

    /// Adds values to the registration domain, the lowest-precedence domain, never written to disk.
    func register(defaults: [String: Any])

    /// The persistent values, without launch arguments or registered defaults.
    func persistentValues() -> [String: Any]

    /// The change stream: every change to a value of this suite, whatever made it, is posted here once.
    var changes: SuiteChangeCenter { get }

    /// Returns when every value written so far is durably stored.
    func flush() throws

    /// A number that changes whenever any value a read can see changes (in any domain, by any
    /// path: a write, `removeAll`, a registration, another process's change), and that no other
    /// state of any suite shares; `nil` when the suite cannot tell.
    ///
    /// A key keeps the value it decoded last with this number and returns it again while the
    /// number is unchanged, without a lookup or a decode. Suites whose values can change behind
    /// their back (`UserDefaults`) return `nil`, the default, and are read every time.
    var valueGeneration: UInt64? { get }
}

extension DefaultsSuite {
    /// Reads the value, calls `body`, and stores the result when it changed.
    public func modify<Result, Failure: Error>(
        forKey key: String, _ body: (inout Any?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let old = object(forKey: key)
        var value = old
        let result = try body(&value)
        if !PropertyListValue.isEqual(old, value) {
            set(value, forKey: key)
        }
        return result
    }

    /// `nil`: a suite that does not number its states is read every time.
    public var valueGeneration: UInt64? { nil }

    /// Sets the values one by one without telling observers, then posts one change with every
    /// key whose read value changed.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        postingChanges(of: changes.lazy.map(\.key)) {
            StorageEnvironment.withoutPropagation {
                for change in changes {
                    set(change.object, forKey: change.key)
                }
            }
        }
    }

    /// The value of `key` if it is an array, as `UserDefaults.array(forKey:)` returns it: for
    /// reading what a key stores (`[String]` of JSON for a range of a `Codable` type, as Defaults
    /// stores it) from code that does not use the key.
    public func array(forKey key: String) -> [Any]? {
        object(forKey: key) as? [Any]
    }

    /// The value of `key` if it is a dictionary, as `UserDefaults.dictionary(forKey:)` returns it.
    public func dictionary(forKey key: String) -> [String: Any]? {
        object(forKey: key) as? [String: Any]
    }

    /// The value of `key` if it is a string, as `UserDefaults.string(forKey:)` returns it (without
    /// converting numbers).
    public func string(forKey key: String) -> String? {
        object(forKey: key) as? String
    }
}
