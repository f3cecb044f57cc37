import DefaultsPropertyList
import Synchronization

/// Whether the keys a program declared can read a stored value: a rule of the typed layer above,
/// which storage needs to leave out an administrator's value that no key of its name reads.
/// Storage knows no keys: the key registry installs the rule as the first key is declared, and
/// until then no key is declared and every value is read.
package enum DeclaredKeyRule {
    /// Why no key declared as `name` in `suite` can read `value` (naming the key and its type), or
    /// `nil` when one can or none is declared.
    package typealias Rule =
        @Sendable (_ value: PropertyListValue, _ name: String, _ suite: any DefaultsSuite) -> String?

    private final class Installed: Sendable {
        let rule: Rule
        init(_ rule: @escaping Rule) { self.rule = rule }
    }

    private static let installed = AtomicLazyReference<Installed>()

    /// Installs `rule`, once: later calls keep the first.
    package static func install(_ rule: @escaping Rule) {
        if installed.load() == nil {
            _ = installed.storeIfNil(Installed(rule))
        }
    }

    /// Why no declared key reads `value` under `name` in `suite`, by the installed rule.
    package static func whyUnreadable(_ value: PropertyListValue, named name: String, in suite: any DefaultsSuite)
        -> String?
    {
        installed.load()?.rule(value, name, suite)
    }
}
