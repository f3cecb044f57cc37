import ArgumentParser
import DefaultsSyncSQL
import Foundation

/// Where `serve` (and any subcommand that reaches the database) reads PostgreSQL's URL, so that
/// the password is never needed on the command line, which every local user can read
/// (`/proc/<pid>/cmdline`):
///
/// - the URL from `--database-url-file` (its first line), else `DEFAULTS_SYNC_DATABASE_URL`, else
///   `--database-url` (kept for trying things out);
/// - a URL without a password takes it from `--database-password-file` (its first line), else from
///   the password file libpq reads (`PGPASSFILE`, else `~/.pgpass`: lines of
///   `host:port:database:user:password`, `*` for any), when one matches.
///
/// A file holding a URL or a password must be a regular file (not a link) that neither its group
/// nor others can read, as libpq requires of `.pgpass`.
struct DatabaseOptions: ParsableArguments {
    @Option(
        help: """
            PostgreSQL's URL, postgres://user@host:5432/database. Prefer DEFAULTS_SYNC_DATABASE_URL or \
            --database-url-file: every local user can read a command line.
            """)
    var databaseURL: String?
    @Option(help: "A file whose first line is PostgreSQL's URL (env DEFAULTS_SYNC_DATABASE_URL_FILE).")
    var databaseURLFile: String?
    @Option(
        help: """
            A file whose first line is the password of the URL's user, for a URL without one (env \
            DEFAULTS_SYNC_DATABASE_PASSWORD_FILE); else PGPASSFILE or ~/.pgpass is read.
            """)
    var databasePasswordFile: String?

    /// The URL to connect with, its password filled in when it names none.
    func url() throws -> String {
        try Self.url(
            given: databaseURL, file: setting(databaseURLFile, "DATABASE_URL_FILE"),
            passwordFile: setting(databasePasswordFile, "DATABASE_PASSWORD_FILE"))
    }

    /// The URL from `file`, else DEFAULTS_SYNC_DATABASE_URL, else `given`; a password from
    /// `passwordFile` or the libpq password file when it has none. The one reading of the
    /// database's URL: `revoke` calls it too.
    static func url(given: String? = nil, file: String?, passwordFile: String?) throws -> String {
        let text: String
        if let file {
            text = try firstLine(ofSecret: file, what: "--database-url-file")
        } else if let url = setting(given, "DATABASE_URL") {
            text = url
        } else {
            throw ValidationError(
                "Give --database-url-file (or DEFAULTS_SYNC_DATABASE_URL_FILE, or the URL in DEFAULTS_SYNC_DATABASE_URL)"
            )
        }
        let database: PostgresURL
        do {
            database = try PostgresURL(text)
        } catch {
            throw ValidationError("\(error)")
        }
        guard database.password?.isEmpty ?? true else { return text }
        let password: String?
        if let passwordFile {
            password = try firstLine(ofSecret: passwordFile, what: "--database-password-file")
        } else {
            // The first server's line (libpq looks one up for each server of a list).
            password = try PasswordFile.password(
                host: database.host ?? "localhost", port: database.port, database: database.database ?? database.user,
                user: database.user)
        }
        guard let password else { return text }
        return inserting(password, into: text)
    }

    /// `url` with `password` (percent-encoded) after its user name: a URL of several servers is
    /// no URL to Foundation, so the text itself is edited.
    static func inserting(_ password: String, into url: String) -> String {
        guard let schemeEnd = url.range(of: "://")?.upperBound else { return url }
        let authorityEnd = url[schemeEnd...].firstIndex { "/?#".contains($0) } ?? url.endIndex
        guard let at = url[schemeEnd..<authorityEnd].lastIndex(of: "@") else { return url }
        let user = url[schemeEnd..<at].prefix { $0 != ":" }
        let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return url[..<schemeEnd] + user + ":" + encoded + url[at...]
    }

    /// The first line of a file holding a secret: a regular file, not a link, that neither its
    /// group nor others can read, of at most 64 KB.
    static func firstLine(ofSecret path: String, what: String) throws -> String {
        let line = try secretText(path, what: what).split(whereSeparator: \.isNewline).first.map(String.init)
        guard let line, !line.isEmpty else { throw ValidationError("\(what): \(path) is empty") }
        return line
    }

    /// The text of a file holding a secret (see ``firstLine(ofSecret:what:)``).
    static func secretText(_ path: String, what: String) throws -> String {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            throw ValidationError("\(what): cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard (status.st_mode & mode_t(S_IFMT)) == mode_t(S_IFREG) else {
            throw ValidationError("\(what): \(path) is not a regular file")
        }
        guard (status.st_mode & 0o077) == 0 else {
            throw ValidationError(
                "\(what): \(path) can be read by its group or others; chmod 600 it (it holds a password)")
        }
        guard status.st_size <= 64 * 1024, let data = FileManager.default.contents(atPath: path),
            data.count <= 64 * 1024, let text = String(data: data, encoding: .utf8)
        else {
            throw ValidationError("\(what): \(path) is larger than 64 KB, not UTF-8, or unreadable")
        }
        return text
    }
}

/// libpq's password file: `PGPASSFILE`, else `~/.pgpass`.
enum PasswordFile {
    /// The password of the first line matching the connection, or `nil` when there is no file or
    /// no line matches.
    static func password(host: String, port: Int, database: String, user: String) throws -> String? {
        let environment = ProcessInfo.processInfo.environment
        let path: String
        if let given = environment["PGPASSFILE"], !given.isEmpty {
            path = given
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            path = home + "/.pgpass"
            guard FileManager.default.fileExists(atPath: path) else { return nil }
        }
        let text = try DatabaseOptions.secretText(path, what: "PGPASSFILE")
        let wanted = [host, String(port), database, user]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = self.fields(of: line)
            guard fields.count == 5 else { continue }
            if zip(fields, wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// The colon-separated fields of a line, `\:` and `\\` standing for `:` and `\`.
    static func fields(of line: Substring) -> [String] {
        var fields: [String] = []
        var field = ""
        var escaping = false
        for character in line {
            if escaping {
                field.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == ":" && fields.count < 4 {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }
}
