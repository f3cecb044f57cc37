import ArgumentParser
import DefaultsSyncServer
import Foundation
import Logging

/// `defaults-sync-server revoke --user U [--before TIME]`: refuses the user's tokens issued before
/// a time, on every instance, and closes their connections that hold one.
struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Revokes a user's tokens issued before a time (now by default), on every instance.",
        discussion: """
            Every instance closes the user's connections whose token was issued (its `iat`) before \
            that time, and refuses such a token from then on; a token issued after it is accepted. \
            A revocation is never moved earlier: revoking again with an earlier time changes nothing. \
            The database's URL comes from --database-url-file or DEFAULTS_SYNC_DATABASE_URL, as for \
            `serve`; a user assigned a node (see `nodes`) is revoked on that node's database too, \
            whose URL its reference names where this command runs.
            """)

    @Option(help: "The user whose tokens are revoked.") var user: String
    @Option(help: "Tokens issued before this time are revoked: now (the default) or ISO 8601 (2025-01-31T12:00:00Z).")
    var before = "now"
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        guard !user.isEmpty else { throw ValidationError("--user must not be empty") }
        guard let time = Self.time(before) else {
            throw ValidationError(
                "--before: \"\(before)\" is neither now nor an ISO 8601 time such as 2025-01-31T12:00:00Z")
        }
        let url = try database.url()
        var logger = Logger(label: "defaults-sync-server")
        logger.logLevel = .warning
        var recorded = try await Revocation.record(
            Revocation(user: user, before: time), databaseURL: url, logger: logger)
        // A user assigned a node is served from its database: the instances hear it there too.
        let node = try await Nodes.withDirectory(database) { directory -> StorageNode? in
            guard let name = try await directory.assignment(of: user) else { return nil }
            return try await directory.nodes().first { $0.name == name }
        }
        if let node {
            let nodeURL: String
            do {
                nodeURL = try node.reference.resolve()
            } catch {
                throw ValidationError("revoked in the instances' database, not on node \(node.name): \(error)")
            }
            recorded = try await Revocation.record(recorded, databaseURL: nodeURL, logger: logger)
        }
        let instant = Date(timeIntervalSince1970: TimeInterval(recorded.before))
        print("revoked the tokens of \(user.debugDescription) issued before \(instant.ISO8601Format())")
    }

    /// Seconds since 1970 of `now` or an ISO 8601 time (with or without fractional seconds).
    static func time(_ text: String) -> Int64? {
        if text == "now" { return Int64(Date().timeIntervalSince1970.rounded(.up)) }
        let formats: [Date.ISO8601FormatStyle] = [
            .iso8601, Date.ISO8601FormatStyle(includingFractionalSeconds: true),
        ]
        for format in formats {
            if let date = try? format.parse(text) { return Int64(date.timeIntervalSince1970.rounded(.up)) }
        }
        return nil
    }
}
