import DefaultsPropertyList
import Foundation

extension Defaults {
    /// Typed values for keys, encoded as launch arguments for another process: how UI tests and
    /// integration tests start an app with the settings they need.
    ///
    /// ```swift
    /// var overrides = Defaults.LaunchArguments()
    /// try overrides.set(.volume, to: 8)
    /// try overrides.set(.userName, to: nil)      // reads as nil, whatever is stored
    /// overrides.arguments
    /// // ["-volume", "<integer>8</integer>", "-userName", "<swift-defaults:absent/>"]
    /// ```
    ///
    /// Each value is serialized by its key's bridge (so `Codable` types, `RawRepresentable` types
    /// and collections are stored exactly as a write would store them) and written as an XML
    /// property-list fragment. In the started process the values form the arguments domain: a read
    /// of the key returns them ahead of the stored value, and nothing is written to disk. A read
    /// sees them in every suite that reads the process's launch arguments: the standard suite, a
    /// ``FileSuite`` opened without `arguments:`, `UserDefaults` (for values, not `nil`, when read
    /// through Foundation directly).
    ///
    /// An optional key set to `nil` reads as if nothing were stored: its default value (`nil` for
    /// a key declared without one), even when the suite stores a value.
    ///
    /// **On Apple platforms (XCTest UI tests)**:
    ///
    /// ```swift
    /// let app = XCUIApplication()
    /// app.launchArguments += overrides.arguments
    /// app.launch()
    /// ```
    ///
    /// **On Linux (or any process you start)**:
    ///
    /// ```swift
    /// let process = Process()
    /// process.executableURL = URL(fileURLWithPath: "/usr/local/bin/my-tool")
    /// process.arguments = ["serve"] + overrides.arguments
    /// try process.run()
    /// ```
    public struct LaunchArguments: Sendable, Equatable, CustomStringConvertible {
        private var overrides: [(name: String, text: String)] = []

        /// Creates an empty set of overrides.
        public init() {}

        /// Overrides `key` with `value`; a key set again keeps only the last value.
        ///
        /// - Throws: ``DefaultsError`` of kind ``DefaultsError/Kind/unsupportedValue`` when the key's
        ///   bridge cannot serialize `value`.
        public mutating func set<Value: Serializable>(_ key: Key<Value>, to value: Value) throws(DefaultsError) {
            let text = try Self.argumentText(for: value, key: key.name)
            if let index = overrides.firstIndex(where: { $0.name == key.name }) {
                overrides[index].text = text
            } else {
                overrides.append((key.name, text))
            }
        }

        /// These overrides with `key` set to `value`; see ``set(_:to:)``.
        ///
        /// ```swift
        /// let arguments = try Defaults.LaunchArguments()
        ///     .setting(.volume, to: 8)
        ///     .setting(.theme, to: .dark)
        ///     .arguments
        /// ```
        public func setting<Value: Serializable>(_ key: Key<Value>, to value: Value) throws(DefaultsError)
            -> Self
        {
            var copy = self
            try copy.set(key, to: value)
            return copy
        }

        /// Drops the override of `key`, if there is one (the process then reads what is stored).
        public mutating func remove(_ key: Keys) {
            overrides.removeAll { $0.name == key.name }
        }

        /// Whether no key is overridden.
        public var isEmpty: Bool {
            overrides.isEmpty
        }

        /// The arguments to add to the process's: `["-name", "<fragment>", …]`, in the order the
        /// keys were first set.
        public var arguments: [String] {
            overrides.flatMap { ["-\($0.name)", $0.text] }
        }

        public var description: String {
            arguments.description
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.arguments == rhs.arguments
        }

        /// The argument that gives `value` to the arguments domain.
        static func argumentText<Value: Serializable>(for value: Value, key: String) throws(DefaultsError)
            -> String
        {
            if let optional = value as? any OptionalProtocol, optional.isNil {
                return ArgumentsDomain.absentMarker
            }
            guard let object = Value.storedForm(of: value) else {
                throw .unserializable(key: key, valueType: Value.self, reason: "its bridge could not serialize it")
            }
            do {
                return try xmlFragment(for: PropertyList.normalize(object))
            } catch {
                var failure = DefaultsError.unserializable(key: key, valueType: Value.self, reason: "\(error)")
                failure.underlyingError = error
                throw failure
            }
        }

        /// `value` as an XML property-list element, without the document's header and `<plist>`
        /// wrapper: `<integer>5</integer>`, `<dict>…</dict>`.
        static func xmlFragment(for value: Any) throws(PropertyListError) -> String {
            let document = String(decoding: try PropertyList.encodeXML(value), as: UTF8.self)
            var fragment = Substring(document)
            if let start = fragment.range(of: "<plist version=\"1.0\">") {
                fragment = fragment[start.upperBound...]
            }
            if let end = fragment.range(of: "</plist>", options: .backwards) {
                fragment = fragment[..<end.lowerBound]
            }
            return String(fragment.trimmingCharacters(in: .newlines))
        }
    }
}
