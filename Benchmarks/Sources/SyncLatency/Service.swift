import Foundation

/// `defaults-sync-server` instances over the benchmark's PostgreSQL, started from the
/// `SyncService/` package's release build (built first when missing).
final class Service {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let packageDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SyncService")

    let executable: String
    let keyFile: String
    private(set) var instances: [(process: Process, port: Int)] = []

    init(database: String, instances count: Int, options: [String]) throws {
        executable = try Self.built()
        keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("p11-\(UUID().uuidString).key").path
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        guard FileManager.default.createFile(atPath: keyFile, contents: key, attributes: [.posixPermissions: 0o600])
        else { throw Failure(description: "cannot write \(keyFile)") }
        for _ in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments =
                [
                    "serve", "--database-url", database, "--port", "0", "--token-key-file", keyFile, "--log-level",
                    "warning",
                ]
                + options
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let data = output.fileHandleForReading.availableData
                guard !data.isEmpty else { throw Failure(description: "the server exited before listening") }
                line += data
            }
            guard
                let port = String(decoding: line, as: UTF8.self).split(whereSeparator: { ":\n".contains($0) })
                    .compactMap({ Int($0) }).last
            else { throw Failure(description: "no port in \(String(decoding: line, as: UTF8.self))") }
            instances.append((process, port))
        }
    }

    var urls: [String] { instances.map { "ws://127.0.0.1:\($0.port)" } }

    /// Tokens for `users`, minted by `defaults-sync-server token` (as a deployment's script would).
    func tokens(for users: [String], namespace: String) throws -> [String] {
        try users.map { user in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["token", "--key-file", keyFile, "--user", user, "--namespace", namespace]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The resident memory of each instance, in bytes.
    func residentBytes() -> [Int] {
        instances.map { instance in
            let status =
                (try? String(contentsOfFile: "/proc/\(instance.process.processIdentifier)/status", encoding: .utf8))
                ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
    }

    func stop() {
        for instance in instances {
            instance.process.terminate()
            instance.process.waitUntilExit()
        }
        unlink(keyFile)
    }

    /// The release build of the server, built now when missing.
    private static func built() throws -> String {
        let path = packageDirectory.appendingPathComponent(".build/release/defaults-sync-server").path
        if !FileManager.default.isExecutableFile(atPath: path) {
            print("building defaults-sync-server (release) in \(packageDirectory.path) ...")
            fflush(nil)
            let status = system(
                "cd '\(packageDirectory.path)' && swift build -c release --product defaults-sync-server > /dev/null")
            guard status == 0, FileManager.default.isExecutableFile(atPath: path) else {
                throw Failure(description: "could not build defaults-sync-server in \(packageDirectory.path)")
            }
        }
        return path
    }
}
