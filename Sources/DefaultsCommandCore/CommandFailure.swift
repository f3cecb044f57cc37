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

    package static func usage(_ message: String, _ usage: String) -> CommandFailure {
        var failure = CommandFailure(message, then: "Usage: \(usage)")
        // EX_USAGE, as swift-argument-parser exits for the usage errors it finds itself.
        failure.status = 64
        return failure
    }
}
