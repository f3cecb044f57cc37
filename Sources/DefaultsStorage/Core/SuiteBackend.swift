import Foundation

/// What a suite can do beyond ``DefaultsSuite``, for the code above the storage core (keys,
/// writability, migrations, sync), which asks through ``DefaultsSuite/backend`` and never names a
/// concrete suite.
///
/// Every suite of this library conforms (through ``EditableSuite``) and is its own backend; each
/// capability has the answer of a suite that lacks it (writable, nothing managed, no store), so
/// that a suite states only what it has. An application's own suite gets those answers through
/// ``ApplicationSuiteBackend``.
package protocol SuiteBackend: Sendable {
    /// The suite as a ``StoreBackedSuite`` when its values are a ``SuiteStore``; `nil` when it
    /// keeps them its own way (`UserDefaults`, an application's suite).
    var storeBacked: (any StoreBackedSuite)? { get }

    /// Keeps `problem` in the suite's problems and tells its handler and ``Defaults/logger``.
    func report(_ problem: DefaultsError)

    /// The file the suite stores its values in, named in its problems; `nil` when none.
    var problemFileURL: URL? { get }

    /// Whether `key` can be changed now, and if not, which administrator's file enforces it.
    func writability(ofKey key: String) -> DefaultsWritability

    /// Whether the administrator enforces `key`'s value here.
    func isManaged(_ key: String) -> Bool

    /// Told by ``Defaults/KeyRegistry`` of each key declared for the suite, after it recorded it.
    func keyWasDeclared(_ name: String)
}

extension SuiteBackend {
    package var storeBacked: (any StoreBackedSuite)? { nil }

    package var problemFileURL: URL? { nil }

    /// Writable: only an administrator's layers make a key otherwise.
    package func writability(ofKey key: String) -> DefaultsWritability { .writable }

    package func isManaged(_ key: String) -> Bool { false }

    package func keyWasDeclared(_ name: String) {}
}

/// The backend of an application's own suite (its conformance to ``DefaultsSuite``): none of the
/// capabilities; its problems go to ``Defaults/logger`` only, as it keeps none.
struct ApplicationSuiteBackend: SuiteBackend {
    let suite: any DefaultsSuite

    func report(_ problem: DefaultsError) {
        StorageEnvironment.logger.error(
            "\(problem.message)", metadata: ["suite": "\(suite.name)", "kind": "\(problem.kind)"])
    }
}

extension DefaultsSuite {
    /// What this suite can do beyond ``DefaultsSuite``: the suite itself for one of this library,
    /// ``ApplicationSuiteBackend`` for an application's own. The one place that tells them apart,
    /// by the change center the suite posts to (``SuiteChangeCenter/backend(of:)``), not by a cast.
    package var backend: any SuiteBackend {
        changes.backend(of: self) ?? ApplicationSuiteBackend(suite: self)
    }
}
