import Defaults
import Foundation
import Testing

extension Trust {
    /// A suite name that cannot name a file does not stop the program: it is escaped.
    @Suite struct SuiteNameTests {
        @Test func nameWithASlashDoesNotStopTheProgram() async {
            await #expect(processExitsWith: .success) {
                let directory = FileManager.default.temporaryDirectory
                    .appendingPathComponent("swift-defaults-tests-\(UUID().uuidString)", isDirectory: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                let suite = FileSuite(name: "a/b", directory: directory, arguments: [])
                suite.set(1, forKey: "k")
                try? suite.flush()
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                guard suite.name == "a/b", names.contains("a%2Fb.plist") else { exit(1) }
            }
        }

        @Test func invalidNamesAreEscapedToFilesOfTheirOwn() {
            let directory = URL(fileURLWithPath: "/tmp/config", isDirectory: true)
            let names = ["", ".", "..", "a/b", "nul\u{0}x", "com.example.app"]
            let files = names.map { FileSuite.fileURL(forName: $0, in: directory).lastPathComponent }
            #expect(
                files == [
                    "%.plist", "%2E.plist", "%2E%2E.plist", "a%2Fb.plist", "nul%00x.plist", "com.example.app.plist",
                ])
            #expect(
                names.allSatisfy {
                    FileSuite.fileURL(forName: $0, in: directory).deletingLastPathComponent() == directory
                })
        }
    }
}
