import Defaults
import DefaultsPropertyList
import DefaultsSchema
import Foundation

/// The administrator's layers of a named domain (`<dir>/<name>.plist` and
/// `<dir>/managed/<name>.plist` for each directory of `XDG_CONFIG_DIRS`). The global domain and
/// files given by path have none. The files are read without opening a suite on the domain, which
/// would move a damaged user file aside.
package enum DomainAdministration {
    /// The administrator's layers of `domain` resolved once, as its program reads them: a value
    /// the key of its name in `schema` does not read (of another type) is passed over, as the
    /// library passes over a value the program's key cannot read, so it neither enforces nor
    /// defaults the key. Without a schema, every value counts.
    package static func resolution(of domain: Domain, schema: DomainSchema?) -> AdministratorResolution {
        guard case .named(let name) = domain else { return AdministratorResolution() }
        return AdministratorResolution(suiteName: name) { key, value in
            schema?.key(named: key)?.typeProblem(with: value)
        }
    }

    /// ``resolution(of:schema:)`` with the domain's schema; one that cannot be read counts as
    /// none here, as in a write (the commands that check values against it say so).
    package static func resolution(of domain: Domain) -> AdministratorResolution {
        resolution(of: domain, schema: (try? SchemaCatalog.schema(of: domain))?.schema)
    }

    /// Tells on standard error of each administrator's value of `key` a read passes over
    /// (``AdministratorResolution/KeyLayers/passedOver``), and why.
    package static func reportPassedOver(_ layers: AdministratorResolution.KeyLayers, key: String) {
        for layer in layers.passedOver {
            Output.printError(
                AdministratorResolution.ignoredMessage(
                    key: key, isManaged: layer.kind == .managed, file: layer.file, reason: layer.unreadable ?? ""))
        }
    }

    /// The failure of an edit of `domain` refused because it writes `keys`, which the
    /// administrator enforces (the edit would be stored and never read), naming the managed files.
    package static func refusal(
        writing keys: [String], of domain: Domain, in layers: AdministratorResolution, editedKeyCount: Int
    ) -> CommandFailure {
        let keys = keys.sorted()
        let files = Set(keys.compactMap { layers.managedFile(forKey: $0)?.path }).sorted()
        let written = editedKeyCount == 1 ? "it was not written" : "nothing was written"
        return CommandFailure(
            "The \(keys.count == 1 ? "key" : "keys") \(keys.joined(separator: ", ")) of \(domain.displayName) "
                + "\(keys.count == 1 ? "is" : "are") managed by the administrator in "
                + "\(files.joined(separator: ", ")); \(written)")
    }
}

extension KeySchema {
    /// Why a program's key of this schema does not read `value` (`expected integer, found
    /// string`), or `nil` when it does: the command's mirror of the library's rule, which passes
    /// over an administrator's such value and reads the default in place of a user's.
    package func typeProblem(with value: PropertyListValue) -> String? {
        guard let expected = type else { return nil }
        let found = SchemaValue(value).storedType
        return KeySchema.fits(found, expected) ? nil : "expected \(expected.rawValue), found \(found.rawValue)"
    }
}
