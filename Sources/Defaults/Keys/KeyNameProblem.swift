extension Defaults {
    /// Tells whether `name` can be used as a key name: ASCII, not starting with `@`, no `.`.
    ///
    /// These are the rules of the Defaults library: `@` and `.` have meaning in key-value coding
    /// (on Apple platforms, observing such a key does not work). A key created with a name that
    /// breaks them works all the same: the problem is logged as a warning and listed in
    /// ``KeyRegistry/nameProblems``, as Defaults warns and goes on.
    public static func isValidKeyName(_ name: String) -> Bool {
        KeyNameProblem(name) == nil
    }

    /// Why a key name breaks the rules, with the key named in the message.
    public struct KeyNameProblem: Error, Sendable, Equatable, CustomStringConvertible {
        /// The rule a name breaks.
        public enum Rule: Sendable, Equatable {
            /// The name is empty.
            case empty
            /// The name has a character outside ASCII.
            case notASCII
            /// The name starts with `@`.
            case leadingAt
            /// The name has a `.`.
            case containsDot
        }

        /// The offending name.
        public let name: String
        /// The rule it breaks.
        public let rule: Rule

        /// Checks `name`; `nil` when it is valid.
        public init?(_ name: String) {
            let rule: Rule
            if name.isEmpty {
                rule = .empty
            } else if !name.utf8.allSatisfy({ $0 < 0x80 }) {
                rule = .notASCII
            } else if name.utf8.first == UInt8(ascii: "@") {
                rule = .leadingAt
            } else if name.utf8.contains(UInt8(ascii: ".")) {
                rule = .containsDot
            } else {
                return nil
            }
            self.name = name
            self.rule = rule
        }

        public var description: String {
            let reason: String
            switch rule {
            case .empty: reason = "it is empty"
            case .notASCII: reason = "it has characters outside ASCII"
            case .leadingAt: reason = "it starts with \"@\""
            case .containsDot: reason = "it contains \".\""
            }
            return "The key name \"\(name)\" is not valid: \(reason). "
                + "Key names must be ASCII, must not start with \"@\" and must not contain \".\"."
        }
    }
}
