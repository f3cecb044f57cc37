import DefaultsSchema

/// Why a command failed, in the words macOS's `defaults` uses; printed on standard error, and the
/// process exits with `status` without writing anything.
package struct CommandFailure: Error, CustomStringConvertible {
    /// One line, which may quote what a file or a person gave: printed escaped as one line, so
    /// that a line break in it cannot forge another.
    package var message: String
    /// The command's own lines after the message (a usage line, "Defaults have not been
    /// changed."), each printed on a line of its own.
    package var followingLines: [String] = []
    package var status: Int32 = 1

    package init(_ message: String, then followingLines: String...) {
        self.message = message
        self.followingLines = followingLines
    }

    package var description: String { ([message] + followingLines).joined(separator: "\n") }
}

extension CommandFailure {
    package static func domainDoesNotExist(_ domain: Domain) -> CommandFailure {
        CommandFailure("Domain \(domain.displayName) does not exist")
    }

    package static func pairDoesNotExist(_ domain: Domain, key: String) -> CommandFailure {
        CommandFailure("The domain/default pair of (\(domain.displayName), \(key)) does not exist")
    }

    package static func couldNotParse(_ text: String) -> CommandFailure {
        CommandFailure("Could not parse: \(text).  Try single-quoting it.")
    }

    /// The refusal of `text` written to `key`, which is `expected` (`an integer`): `Refused to write
    /// fontSize of com.example.app: fontSize is an integer (Swift.Int), and big is not (schema
    /// /path). Nothing was written.`
    package static func notOfType(
        _ text: String, key: String, in domain: Domain, expected: StoredType?, details: String? = nil,
        source: String? = nil
    ) -> CommandFailure {
        let expected = expected.map(\.withArticle) ?? "a value"
        return CommandFailure(
            "Refused to write \(key) of \(domain.displayName): \(key) is \(expected)"
                + (details.map { " (\($0))" } ?? "") + ", and \(text) is not"
                + (source.map { " (\($0))" } ?? "") + ". Nothing was written.")
    }

    package static func usage(_ message: String, _ usage: String) -> CommandFailure {
        var failure = CommandFailure(message, then: "Usage: \(usage)")
        // EX_USAGE, as swift-argument-parser exits for the usage errors it finds itself.
        failure.status = 64
        return failure
    }
}
