import Foundation

extension Defaults {
    /// Whether a program can change a key's value, and why not: what a settings screen needs to
    /// disable a control and say who decides.
    ///
    /// ```swift
    /// switch Defaults.writability(of: .fontSize) {
    /// case .writable:
    ///     slider.isEnabled = true
    /// case .managed(let file):
    ///     slider.isEnabled = false
    ///     note.text = "Set by your administrator (\(file?.path ?? "a managed file"))"
    /// }
    /// ```
    public enum Writability: Sendable, Hashable, CustomStringConvertible {
        /// A write is stored and read back.
        case writable
        /// The administrator enforces the value in a managed file (`<dir>/managed/<suite>.plist`
        /// of `XDG_CONFIG_DIRS`): a write changes nothing and is reported as a
        /// ``DefaultsError/Kind/managedKey`` problem. The file, when it is known.
        case managed(file: URL?)

        /// Whether a write is stored and read back.
        public var isWritable: Bool { self == .writable }

        /// `writable`, or `managed by the administrator in <file>`.
        public var description: String {
            switch self {
            case .writable: "writable"
            case .managed(let file): "managed by the administrator in \(file?.path ?? "a managed file")"
            }
        }
    }

    /// Whether `key` can be changed now, and if not, which administrator's file enforces it.
    ///
    /// Only a ``FileSuite`` has administrator's layers; a key of any other suite is writable. A
    /// managed value that the key cannot read is ignored (and reported through the suite's
    /// problems), so it does not make the key managed.
    public static func writability(of key: Keys) -> Writability {
        key.suite.backend.writability(ofKey: key.name)
    }
}
