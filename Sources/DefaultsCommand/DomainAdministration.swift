import Defaults
import DefaultsPropertyList
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

    /// The administrator's values for `domain`: the vendor defaults and the enforced values.
    static func values(of domain: Domain) -> (vendor: [String: PropertyListValue], managed: [String: PropertyListValue])
    {
        guard case .named(let name) = domain else { return ([:], [:]) }
        return FileSuite.administratorValues(suiteName: name)
    }

    /// What a program reads from `domain`: the enforced values over the user's `values` over the
    /// vendor defaults.
    static func effectiveValues(
        of domain: Domain, user values: [String: PropertyListValue]
    ) -> [String: PropertyListValue] {
        guard case .named(let name) = domain else { return values }
        return FileSuite.resolvedValues(suiteName: name, user: values)
    }

    /// Refuses a write of `key` when the administrator enforces its value, naming the managed file:
    /// the write would be stored and never read.
    static func refuseWrite(of key: String, in domain: Domain) throws(CommandFailure) {
        guard let managed = files(forKey: key, in: domain).managed else { return }
        throw CommandFailure(
            "The key \(key) of \(domain.displayName) is managed by the administrator in \(managed.path); "
                + "it was not written")
    }

    /// Refuses to replace the whole domain with `values` when the administrator enforces some of
    /// their keys, naming them and the managed files: those values would be stored and never read.
    static func refuseReplacement(with values: [String: PropertyListValue], in domain: Domain) throws(CommandFailure) {
        guard case .named(let name) = domain else { return }
        let managed = FileSuite.managedFiles(suiteName: name)
        let refused = values.keys.filter { managed[$0] != nil }.sorted()
        guard !refused.isEmpty else { return }
        let files = Set(refused.compactMap { managed[$0]?.path }).sorted()
        throw CommandFailure(
            "The \(refused.count == 1 ? "key" : "keys") \(refused.joined(separator: ", ")) of \(domain.displayName) "
                + "\(refused.count == 1 ? "is" : "are") managed by the administrator in "
                + "\(files.joined(separator: ", ")); nothing was written")
    }
}
