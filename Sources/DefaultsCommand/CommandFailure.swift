/// Why a command failed, in the words macOS's `defaults` uses; printed on standard error, and the
/// process exits with `status` without writing anything.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var status: Int32 = 1

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}

extension CommandFailure {
    static func domainDoesNotExist(_ domain: Domain) -> CommandFailure {
        CommandFailure("Domain \(domain.displayName) does not exist")
    }

    static func pairDoesNotExist(_ domain: Domain, key: String) -> CommandFailure {
        CommandFailure("The domain/default pair of (\(domain.displayName), \(key)) does not exist")
    }

    static func couldNotParse(_ text: String) -> CommandFailure {
        CommandFailure("Could not parse: \(text).  Try single-quoting it.")
    }

    static func usage(_ message: String, _ usage: String) -> CommandFailure {
        var failure = CommandFailure("\(message)\nUsage: \(usage)")
        // EX_USAGE, as swift-argument-parser exits for the usage errors it finds itself.
        failure.status = 64
        return failure
    }
}
