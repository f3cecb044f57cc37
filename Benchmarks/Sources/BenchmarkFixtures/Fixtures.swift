@_spi(Testing) import Defaults
import Foundation
import Synchronization

/// What the benchmarks measure, shared by the package-benchmark suite and the ratio report.
public enum Fixtures {
    /// A fresh directory under the system's temporary directory.
    public static func makeDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-defaults-benchmarks-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// 10,000 keys of mixed, realistic values (numbers, flags, short strings, dates, small
    /// arrays): the suite of P4, P5 and P7 (ARCHITECTURE.md's targets), some 640 KB as XML.
    public static var tenThousandValues: [String: Any] { values(count: 10_000) }

    /// `count` keys of the mix of ``tenThousandValues``.
    public static func values(count: Int) -> [String: Any] {
        var values: [String: Any] = [:]
        for index in 0..<count {
            let key = "setting.\(index)".replacingOccurrences(of: ".", with: "-")
            switch index % 6 {
            case 0: values[key] = index
            case 1: values[key] = "value number \(index)"
            case 2: values[key] = Double(index) / 7
            case 3: values[key] = index % 2 == 0
            case 4: values[key] = Date(timeIntervalSince1970: 1_700_000_000 + Double(index))
            default: values[key] = [index, index + 1, index + 2]
            }
        }
        return values
    }

    /// A file suite holding the 10,000 values, flushed; the file is at `suite.fileURL`.
    public static func tenThousandKeySuite(in directory: URL, name: String = "large") throws -> FileSuite {
        try keySuite(count: 10_000, in: directory, name: name)
    }

    /// A file suite holding `count` keys of the mix of ``tenThousandValues``, flushed.
    public static func keySuite(count: Int, in directory: URL, name: String) throws -> FileSuite {
        let suite = FileSuite(name: name, directory: directory, arguments: [])
        for (key, value) in values(count: count) {
            suite.set(value, forKey: key)
        }
        try suite.flush()
        return suite
    }

    /// A suite name for the `UserDefaults` baselines, unique to this run.
    public static func userDefaultsSuiteName(_ purpose: String) -> String {
        "swift-defaults-benchmark-\(purpose)-\(getpid())"
    }

    /// Removes the files Foundation wrote for `suiteNames`. Foundation fixes its directory when
    /// the process starts, so they are in `$XDG_CONFIG_HOME` or `~/.config` as it was then.
    public static func removeUserDefaultsFiles(_ suiteNames: [String]) {
        for name in suiteNames {
            UserDefaults.standard.removePersistentDomain(forName: name)
            try? FileManager.default.removeItem(at: FileSuite.fileURL(forName: name))
        }
    }

    private static let leftovers = Mutex<(directories: [URL], suiteNames: [String])>(([], []))
    private static let installCleanup: Void = {
        atexit {
            let (directories, suiteNames) = Fixtures.leftovers.withLock { $0 }
            for directory in directories {
                try? FileManager.default.removeItem(at: directory)
            }
            Fixtures.removeUserDefaultsFiles(suiteNames)
        }
    }()

    /// Removes `directory` and Foundation's files for `suiteNames` when the process exits.
    public static func removeAtExit(directory: URL, userDefaultsSuites suiteNames: [String]) {
        _ = installCleanup
        leftovers.withLock {
            $0.directories.append(directory)
            $0.suiteNames += suiteNames
        }
    }

    /// `UserDefaults(suiteName:)` holding the same values, synchronized.
    public static func tenThousandKeyUserDefaults(name: String) -> UserDefaults? {
        guard let defaults = UserDefaults(suiteName: name) else { return nil }
        for (key, value) in tenThousandValues {
            defaults.set(value, forKey: key)
        }
        defaults.synchronize()
        return defaults
    }

    /// The resident set size of this process, from `/proc/self/statm` (0 where there is none).
    /// The anonymous part of the resident memory (`RssAnon`: the heap, stacks), without the pages of
    /// code and other mapped files.
    public static func anonymousResidentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kilobytes = Int(line.dropFirst("RssAnon:".count).filter(\.isNumber))
        else { return 0 }
        return kilobytes * 1024
    }

    public static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
