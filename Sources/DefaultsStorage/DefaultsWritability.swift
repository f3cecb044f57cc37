import Foundation

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
public enum DefaultsWritability: Sendable, Hashable, CustomStringConvertible {
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
