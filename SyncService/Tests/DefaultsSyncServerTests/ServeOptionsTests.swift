import Foundation
import TestSupport
import Testing

/// `serve` refuses an option out of its range before it connects to anything, naming the option,
/// rather than starting an instance whose every push would then fail.
struct ServeOptionsTests {
    @Test(arguments: ["0", "36501", "2147483648", "99999999999"])
    func tombstoneDaysOutOfRangeAreRefusedAtStart(days: String) throws {
        let directory = try TemporaryDirectory()
        let key = directory.url.appendingPathComponent("token.key").path
        _ = FileManager.default.createFile(
            atPath: key, contents: Data(repeating: 7, count: 32), attributes: [.posixPermissions: 0o600])
        // No server listens on port 1: refused before it would be tried.
        let result = try ChildProcess.run(
            SyncServerProcess.executable,
            [
                "serve", "--database-url", "postgres://sync@127.0.0.1:1/defaults_sync", "--token-key-file", key,
                "--port", "0", "--tombstone-days", days,
            ],
            timeout: .seconds(30))
        #expect(result.status == 64, "\(result)")
        #expect(result.error.contains("--tombstone-days must be from 1 to 36500"), "\(result.error)")
        #expect(!result.output.contains("listening on"))
    }
}
