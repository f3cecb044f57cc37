import Defaults
import Foundation
import Synchronization

/// A suite of an application's own, as a program would write one: integers in memory, each `set`
/// posting its own change, and the protocol's default `setValues`.
final class ApplicationSuite: DefaultsSuite {
    let name = "application-\(UUID().uuidString)"
    let changes = SuiteChangeCenter()
    private let values: Mutex<[String: Int]>

    init(values: [String: Int] = [:]) {
        self.values = Mutex(values)
    }

    func object(forKey key: String) -> Any? { values.withLock { $0[key] } }

    func set(_ object: Any?, forKey key: String) {
        values.withLock { $0[key] = object as? Int }
        changes.post(SuiteChange(keys: [key]))
    }

    func removeAll() {
        let keys = values.withLock { values in
            defer { values = [:] }
            return Set(values.keys)
        }
        changes.post(SuiteChange(keys: keys))
    }

    func register(defaults: [String: Any]) {}

    func persistentValues() -> [String: Any] { values.withLock { $0 } }

    func flush() throws {}
}
