import ArgumentParser
import DefaultsSyncServer
import Foundation

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints a signed token for each user of one namespace on stdout, one a line, and nothing else.",
        discussion: """
            The token carries the id of the key that signed it (kid: the key file's name without \
            .key), when it was issued (iat) and when it expires (exp); with --assign-node, the \
            user's node too (see `nodes`). Tokens are printed in the order of --user, and only \
            once every one of them is signed: a user that cannot have one prints none.
            """)

    @Option(help: "A file of a key the servers verify tokens with, named <kid>.key (repeatable; see --kid).")
    var keyFile: [String]
    @Option(help: "The id of the key to sign with, among --key-file's (default: the first).") var kid: String?
    @Option(help: "The user whose settings the token reads and writes (repeatable: a token each, in one run).")
    var user: [String]
    @Option(help: "The namespace, for example the app's identifier.") var namespace: String
    @Option(help: "How long the token is valid: 30d, 12h, 15m or 90s (default 30d).") var expiresIn = "30d"
    @Option(help: "The issuer (iss), for servers given --token-issuer.") var issuer: String?
    @Option(help: "The audience (aud), for servers given --token-audience.") var audience: String?
    @Flag(
        help: """
            Name the user's node (node), assigning them one at their first token: asks the directory \
            in the database of --database-url-file or DEFAULTS_SYNC_DATABASE_URL.
            """)
    var assignNode = false
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        guard let lifetime = TokenDuration.parse(expiresIn) else {
            throw ValidationError("--expires-in: \"\(expiresIn)\" is not a duration such as 30d, 12h, 15m or 90s")
        }
        let tokens = try await AccessTokens(keyFiles: keyFile)
        if let kid, !tokens.keyIDs.contains(kid) {
            throw ValidationError(
                "--kid: no --key-file is \(kid).key (the keys are \(tokens.keyIDs.joined(separator: ", ")))")
        }
        guard !user.isEmpty else { throw ValidationError("Give --user, once for each token") }
        var nodes: [String?] = Array(repeating: nil, count: user.count)
        if assignNode {
            // One connection to the directory for every user.
            nodes = try await Nodes.withDirectory(database) { directory in
                var assigned: [String?] = []
                for user in user {
                    assigned.append(try await directory.assign(user: user))
                }
                return assigned
            }
        }
        var signed: [String] = []
        for (user, node) in zip(user, nodes) {
            do {
                signed.append(
                    try await tokens.sign(
                        user: user, namespace: namespace, lifetime: lifetime, keyID: kid, issuer: issuer,
                        audience: audience, node: node))
            } catch .malformed(let reason) {
                // What a server would refuse (a control character in --user, ...) is not signed.
                throw ValidationError("No token signed: \(reason)")
            }
        }
        print(signed.joined(separator: "\n"))
    }
}

/// The options of `serve` about tokens, each also from the environment (`DEFAULTS_SYNC_<NAME>`).
struct TokenOptions: ParsableArguments {
    @Option(
        help: """
            A file of a key tokens are signed with: 32 random bytes or more, mode 600, named <kid>.key. \
            Repeat it to rotate keys: a token is verified with the key its kid names, one without a kid with \
            the first (env DEFAULTS_SYNC_TOKEN_KEY_FILE, several separated by ':').
            """)
    var tokenKeyFile: [String] = []
    @Option(help: "The clocks' allowance for exp, nbf and iat: 60s, 2m, ... (default 60s).") var tokenLeeway: String?
    @Option(help: "The longest a token may live from iat to exp: 30d, 12h, ..., or none (default 30d).")
    var maxTokenLifetime: String?
    @Option(help: "The issuer (iss) every token must name (default: not checked).") var tokenIssuer: String?
    @Option(help: "The audience (aud) every token must list (default: not checked).") var tokenAudience: String?

    /// The key files, from the command line or the environment; at least one.
    func keyFiles() throws -> [String] {
        let files =
            tokenKeyFile.isEmpty
            ? (setting(nil, "TOKEN_KEY_FILE")?.split(separator: ":").map(String.init) ?? []) : tokenKeyFile
        guard !files.isEmpty else {
            throw ValidationError("Give --token-key-file (or DEFAULTS_SYNC_TOKEN_KEY_FILE)")
        }
        return files
    }

    /// What tokens must satisfy.
    func policy() throws -> TokenPolicy {
        var policy = TokenPolicy()
        if let text = setting(tokenLeeway, "TOKEN_LEEWAY") {
            guard let leeway = TokenDuration.parse(text), leeway <= .seconds(86_400) else {
                throw ValidationError("--token-leeway: \"\(text)\" is not a duration of a day at most, such as 60s")
            }
            policy.leeway = leeway
        }
        if let text = setting(maxTokenLifetime, "MAX_TOKEN_LIFETIME") {
            if text == "none" {
                policy.maximumLifetime = nil
            } else {
                guard let lifetime = TokenDuration.parse(text), lifetime > .zero else {
                    throw ValidationError("--max-token-lifetime: \"\(text)\" is not a duration such as 30d, or none")
                }
                policy.maximumLifetime = lifetime
            }
        }
        policy.issuer = setting(tokenIssuer, "TOKEN_ISSUER")
        policy.audience = setting(tokenAudience, "TOKEN_AUDIENCE")
        return policy
    }
}

/// A duration as the options write it: a count and a unit, `30d`, `12h`, `15m` or `90s`.
enum TokenDuration {
    static func parse(_ text: String) -> Duration? {
        guard let unit = text.last, let count = Int64(text.dropLast()), count >= 0 else { return nil }
        let seconds: Int64? =
            switch unit {
            case "d": 86_400
            case "h": 3_600
            case "m": 60
            case "s": 1
            default: nil
            }
        guard let seconds else { return nil }
        let (total, overflow) = count.multipliedReportingOverflow(by: seconds)
        return overflow ? nil : .seconds(total)
    }
}
