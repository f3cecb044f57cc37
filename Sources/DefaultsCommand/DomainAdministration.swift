import Defaults
import Foundation

/// The administrator's layers of a named domain (`<dir>/<name>.plist` and
/// `<dir>/managed/<name>.plist` for each directory of `XDG_CONFIG_DIRS`), as the library resolves
/// them. The global domain and files given by path have none.
enum DomainAdministration {
    /// A suite on a named domain with its administrator's layers, without launch arguments; `nil`
    /// for other domains.
    static func suite(_ domain: Domain, in store: DomainStore) -> FileSuite? {
        guard case .named(let name) = domain else { return nil }
        return FileSuite(name: name, directory: store.directory, arguments: [], coalescingDelay: .seconds(24 * 60 * 60))
    }

    /// Refuses a write of `key` when the administrator enforces its value, naming the managed file:
    /// the write would be stored and never read.
    static func refuseWrite(of key: String, in domain: Domain) throws(CommandFailure) {
        guard let suite = suite(domain, in: DomainStore()), case .managed(let file) = suite.valueSource(forKey: key)
        else { return }
        throw CommandFailure(
            "The key \(key) of \(domain.displayName) is managed by the administrator in \(file.path); "
                + "it was not written")
    }
}
