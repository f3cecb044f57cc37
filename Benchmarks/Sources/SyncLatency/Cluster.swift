import Foundation

/// The server the benchmark syncs through.
enum Cluster {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/postgres-cluster.sh")

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `$DEFAULTS_SYNC_URL`, or a throwaway server's URL and directory.
    static func urlOrStart() throws -> (url: String, directory: String?) {
        if let url = ProcessInfo.processInfo.environment["DEFAULTS_SYNC_URL"], !url.isEmpty {
            return (url, nil)
        }
        let (directory, port) = try start()
        return (url(port: port), directory)
    }

    /// A throwaway server on a random free port (the script's `start`): its directory and port.
    static func start() throws -> (directory: String, port: Int) {
        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<60_000)
            if let directory = try? run(["start", "\(port)"]) {
                return (directory, port)
            }
        }
        throw Failure(description: "could not start PostgreSQL with \(script.path); set DEFAULTS_SYNC_URL")
    }

    /// The URL of `database` on a throwaway server's `port`, as the script's user `defaults`.
    static func url(port: Int, database: String = "defaults_sync") -> String {
        "postgres://defaults:defaults-test-password@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    static func destroy(_ directory: String) {
        _ = try? run(["destroy", directory])
    }

    /// Runs `script` (this one unless given) with `arguments`, each quoted for the shell, through
    /// `system()` (which reaps it itself), its output through a file.
    static func run(_ arguments: [String], script: URL = script) throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("p8-\(UUID().uuidString).out").path
        defer { unlink(output) }
        let quoted = ([script.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
        guard system("bash \(quoted.joined(separator: " ")) > '\(output)' 2>&1 < /dev/null") == 0 else {
            throw Failure(description: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "failed")
        }
        return ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }
}
