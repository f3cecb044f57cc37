import Foundation

extension Defaults {
    /// Whether a program can change a key's value, and why not: ``DefaultsWritability``.
    public typealias Writability = DefaultsWritability

    /// Whether `key` can be changed now, and if not, which administrator's file enforces it.
    ///
    /// Only a ``FileSuite`` has administrator's layers; a key of any other suite is writable. A
    /// managed value that the key cannot read is ignored (and reported through the suite's
    /// problems), so it does not make the key managed.
    public static func writability(of key: Keys) -> Writability {
        key.suite.backend.writability(ofKey: key.name)
    }
}
