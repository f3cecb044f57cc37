import Defaults
import Foundation

/// A fresh file suite, the Linux default kind, in its own temporary directory.
///
/// The only part of this target that is not code as a Defaults user writes it: a Defaults user
/// passes `suite: UserDefaults(suiteName:)`, and these tests pass a suite of their own so that they
/// run in parallel and leave nothing behind.
func makeSuite() -> FileSuite {
    let directory = CompatibilityFiles.root.appendingPathComponent(UUID().uuidString, isDirectory: true)
    return FileSuite(name: "swift-defaults-compatibility-\(UUID().uuidString)", directory: directory, arguments: [])
}

/// `<tmp>/swift-defaults-compatibility-tests/<pid>`, removed at exit; what processes that are gone
/// left there is removed at the next start.
private enum CompatibilityFiles {
    static let root: URL = {
        let parent = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-defaults-compatibility-tests", isDirectory: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? [] {
            if let pid = Int32(name), kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
            }
        }
        atexit {
            // Write what is pending first, so that nothing recreates the files afterwards.
            try? Defaults.flushAll()
            try? FileManager.default.removeItem(at: CompatibilityFiles.root)
        }
        return parent.appendingPathComponent("\(getpid())", isDirectory: true)
    }()
}

/// The suite of the keys declared as `static let` in `extension Defaults.Keys`, as Defaults users
/// declare them. Each test uses keys of its own.
let sharedSuite = makeSuite()
