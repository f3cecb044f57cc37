/// Why `defaults-sync status` fails: a kind scripts can match, and a message naming the problem
/// for people. Each one makes the command exit with a non-zero status.
struct StatusProblem: Error, Encodable, CustomStringConvertible {
    enum Kind: String, Encodable {
        /// `$DEFAULTS_SYNC_URL` is not set.
        case noStore = "no-store"
        /// The URL cannot be read (no scheme, no host, a bad `sslmode`, …).
        case badURL = "bad-url"
        /// The URL's scheme is neither `postgres://` nor `ws://`/`wss://`.
        case unknownScheme = "unknown-scheme"
        /// The sync service's URL without `$DEFAULTS_SYNC_TOKEN`.
        case noToken = "no-token"
        /// The token is not a JWT naming a user and a namespace.
        case badToken = "bad-token"
        /// The token names another namespace than `$DEFAULTS_SYNC_NAMESPACE`.
        case namespaceMismatch = "namespace-mismatch"
        /// The store could not be reached, or refused the connection (the message says why).
        case unreachable
        /// The sync service refused the token (expired, revoked, signed with another key).
        case refusedToken = "refused-token"
        /// The store did not answer within the deadline.
        case timedOut = "timed-out"
        /// The `postgres://` URL names the sync service's database, which holds the service's
        /// tables and not the store's: the service is asked through its `wss://` URL.
        case serviceDatabase = "service-database"
        /// The database's store schema is newer than this program's: nothing was migrated.
        case newerSchema = "newer-schema"
        /// The store connected but could not list its records.
        case storeFailed = "store-failed"
        /// A suite's sync journal, or their directory, could not be read.
        case unreadableJournal = "unreadable-journal"
    }

    var kind: Kind
    var message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    var description: String { message }
}
