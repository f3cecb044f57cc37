@_spi(Files) import Defaults
import Foundation

/// The administrator's layers of a named domain (`<dir>/<name>.plist` and
/// `<dir>/managed/<name>.plist` for each directory of `XDG_CONFIG_DIRS`). The global domain and
/// files given by path have none. The files are read without opening a suite on the domain, which
/// would move a damaged user file aside.
enum DomainAdministration {
    /// The managed and vendor files that hold `key` for `domain`.
    static func files(forKey key: String, in domain: Domain) -> (managed: URL?, vendor: URL?) {
        guard case .named(let name) = domain else { return (nil, nil) }
        return FileSuite.administratorFiles(forKey: key, suiteName: name)
    }

    /// Refuses a write of `key` when the administrator enforces its value, naming the managed file:
    /// the write would be stored and never read.
    static func refuseWrite(of key: String, in domain: Domain) throws(CommandFailure) {
        guard let managed = files(forKey: key, in: domain).managed else { return }
        throw CommandFailure(
            "The key \(key) of \(domain.displayName) is managed by the administrator in \(managed.path); "
                + "it was not written")
    }
}
