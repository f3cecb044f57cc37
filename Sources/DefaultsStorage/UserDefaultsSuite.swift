import DefaultsPropertyList
import Foundation
import Synchronization

/// Foundation's `UserDefaults` as a suite: the default on Apple platforms, and usable on Linux.
///
/// On Linux, Foundation loses values that were not synchronized before the process exits. Writes
/// made through this suite are therefore synchronized shortly after they happen (several writes
/// share one `synchronize()`), on ``flush()``, and at normal process exit.
///
/// Changes are announced for writes made through this suite. Foundation posts no change
/// notification on Linux, so a value set with `UserDefaults.set(_:forKey:)` directly, or by another
/// process, is not seen until it is read.
public final class UserDefaultsSuite: DefaultsSuite, EditableSuite, Sendable {
    /// The wrapped defaults object.
    ///
    /// `nonisolated(unsafe)`, the one exemption of this class (the compiler checks the rest):
    /// Foundation documents `UserDefaults` as thread-safe; it is not marked `Sendable` only
    /// because it is an open class.
    public nonisolated(unsafe) let userDefaults: UserDefaults
    public let name: String
    public let changes = SuiteChangeCenter()
    private let problemLog = SuiteProblems()
    /// The persistent domain's name when known: `UserDefaults` does not tell its own.
    private let domainName: String?
    /// Synchronizes a short while after a write (several writes share one `synchronize()`) and
    /// on ``flush()``; a scheduled synchronize that fails is logged.
    private let writes = WriteScheduler<UserDefaultsSuite>(
        delay: UserDefaultsSuite.coalescingDelay, write: { $0.synchronize() },
        onScheduledFailure: { suite, error in
            suite.report(
                error as? DefaultsError
                    ?? DefaultsError(suite: suite.name, kind: .writeFailed, message: "\(error)", underlyingError: error)
            )
        })

    /// How long writes are collected before one `synchronize()` stores them all.
    static let coalescingDelay: Duration = .milliseconds(50)

    private static let instances = Mutex<[ObjectIdentifier: UserDefaultsSuite]>([:])

    /// The suite for `UserDefaults.standard`.
    public static let standard = shared(.standard, name: StorageEnvironment.standardSuiteName)

    /// The one suite that wraps `userDefaults`, so that every key and observer of the same
    /// `UserDefaults` object shares one change stream.
    public static func shared(_ userDefaults: UserDefaults, name: String? = nil) -> UserDefaultsSuite {
        let id = ObjectIdentifier(userDefaults)
        return instances.withLock { instances in
            if let suite = instances[id] {
                return suite
            }
            let suite = UserDefaultsSuite(userDefaults, domainName: name, index: instances.count)
            instances[id] = suite
            return suite
        }
    }

    /// The suite for `UserDefaults(suiteName:)`; `nil` where Foundation refuses the name.
    public static func named(_ suiteName: String) -> UserDefaultsSuite? {
        UserDefaults(suiteName: suiteName).map { shared($0, name: suiteName) }
    }

    private init(_ userDefaults: UserDefaults, domainName: String?, index: Int) {
        self.userDefaults = userDefaults
        self.domainName = domainName
        self.name = domainName ?? "UserDefaults-\(index)"
        changes.belongs(to: self)
        SuiteRegistry.add(self)
    }

    public func object(forKey key: String) -> Any? {
        guard let object = userDefaults.object(forKey: key) else { return nil }
        if let string = object as? String, string == ArgumentsDomain.absentMarker, isAbsentInArguments(key) {
            return registeredObject(forKey: key)
        }
        return PropertyListValue.normalized(object)
    }

    /// Whether the launch arguments set `key` to ``ArgumentsDomain/absentMarker`` (rather than a
    /// stored value happening to be that string).
    private func isAbsentInArguments(_ key: String) -> Bool {
        let arguments = userDefaults.volatileDomain(forName: UserDefaults.argumentDomain)
        return arguments[key] as? String == ArgumentsDomain.absentMarker
    }

    private func registeredObject(forKey key: String) -> Any? {
        userDefaults.volatileDomain(forName: UserDefaults.registrationDomain)[key].flatMap(
            PropertyListValue.normalized)
    }

    /// Stores `object`; one that is not a property-list object (which Foundation would stop the
    /// process for) is not stored, and is reported (``problems``, ``onProblem``,
    /// ``Defaults/logger``).
    public func set(_ object: Any?, forKey key: String) {
        write(object, forKey: key)
    }

    /// Stores several values and posts one change event. A value that is not a property-list
    /// object is reported, and none of the values is stored.
    public func setValues(_ changes: [(key: String, object: Any?)]) {
        write(changes)
    }

    package func apply(_ values: some Collection<(key: String, value: PropertyListValue?)>) {
        postingChanges(of: values.lazy.map(\.key)) {
            for (key, value) in values {
                if let value {
                    userDefaults.set(value.object, forKey: key)
                } else {
                    userDefaults.removeObject(forKey: key)
                }
            }
            writes.writeLater(self)
        }
    }

    /// Problems met since the suite was made, oldest first (at most the last 100): values that
    /// could not be stored or registered, failed synchronizations.
    public var problems: [DefaultsError] { problemLog.all }

    /// Called with each problem as it happens, on the thread that met it, with no lock held.
    public var onProblem: (@Sendable (DefaultsError) -> Void)? {
        get { problemLog.onProblem }
        set { problemLog.onProblem = newValue }
    }

    package func report(_ problem: DefaultsError) {
        problemLog.report(problem)
    }

    public func removeAll() {
        let keys = Array(persistentValues().keys)
        postingChanges(of: keys) {
            for key in keys {
                userDefaults.removeObject(forKey: key)
            }
            writes.writeLater(self)
        }
    }

    /// Registers with Foundation, whose registration domain is shared by every `UserDefaults`
    /// object of the process.
    public func register(defaults: [String: Any]) {
        userDefaults.register(defaults: registrable(defaults).mapValues(\.object))
    }

    /// The suite's persistent domain. For a `UserDefaults` object whose domain name is unknown
    /// (one passed to ``shared(_:name:)`` without a name), every value it resolves except
    /// registered defaults and launch arguments.
    public func persistentValues() -> [String: Any] {
        let values: [String: Any]
        if let domainName {
            values = userDefaults.persistentDomain(forName: domainName) ?? [:]
        } else {
            let volatile = [UserDefaults.registrationDomain, UserDefaults.argumentDomain]
                .compactMap { userDefaults.volatileDomain(forName: $0) }
                .reduce(into: Set<String>()) { $0.formUnion($1.keys) }
            values = userDefaults.dictionaryRepresentation().filter { !volatile.contains($0.key) }
        }
        return values.compactMapValues(PropertyListValue.normalized)
    }

    public func flush() throws {
        try writes.flush(self)
    }

    private func synchronize() -> WriteScheduler<UserDefaultsSuite>.Written {
        guard userDefaults.synchronize() else {
            return WriteScheduler.Written(
                failure: DefaultsError(suite: name, kind: .writeFailed, message: "UserDefaults.synchronize() failed"))
        }
        return WriteScheduler.Written()
    }
}
