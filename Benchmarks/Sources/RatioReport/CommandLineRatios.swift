import BenchmarkFixtures
import Foundation

// P9: `defaults read <domain> <key>` as a whole process (start, load, print, exit) against the
// toolchain's `plutil -p <file>` on the same file.

/// The `defaults` binary: `$DEFAULTS_BINARY`, or the root package's release build
/// (`swift build -c release --product defaults` in the directory above this package).
func defaultsBinary() -> URL? {
    let candidates = [
        ProcessInfo.processInfo.environment["DEFAULTS_BINARY"],
        FileManager.default.currentDirectoryPath + "/../.build/release/defaults",
    ]
    return candidates.compactMap { $0 }.map { URL(fileURLWithPath: $0).standardizedFileURL }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// `plutil` from the directory of the `swift` on `PATH`, or anywhere on `PATH`.
func plutilBinary() -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("plutil") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// The median wall time of running `executable` to completion, output discarded.
func processTime(_ executable: URL, _ arguments: [String], environment: [String: String]) throws -> Duration {
    var times: [Duration] = []
    for _ in 0..<21 {
        let (time, status) = try timedRun(executable, arguments, environment: environment)
        if status != 0 {
            throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: executable.path])
        }
        times.append(time)
    }
    return times.sorted()[times.count / 2]
}

@MainActor func measureCommandLineRead(fileURL: URL) {
    let target = "P9 `defaults read <domain> <key>` process vs `plutil -p <file>` (≤ 1.0×)"
    guard let defaults = defaultsBinary() else {
        row(target, "not built", "-", "run `swift build -c release --product defaults` in ..", nil)
        return
    }
    guard let plutil = plutilBinary() else {
        row(target, "-", "no plutil on PATH", "not measured", nil)
        return
    }
    // The command finds the domain `<name>.plist` in `$XDG_CONFIG_HOME`.
    let home = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: home, userDefaultsSuites: [])
    let domainFile = home.appendingPathComponent("com.example.large.plist")
    do {
        try FileManager.default.copyItem(at: fileURL, to: domainFile)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = home.path
        let ours = try processTime(defaults, ["read", "com.example.large", "setting-1"], environment: environment)
        let baseline = try processTime(plutil, ["-p", domainFile.path], environment: environment)
        row(
            target, format(ours), format(baseline), String(format: "%.2f×", ratio(ours, baseline)),
            ratio(ours, baseline) <= 1)
    } catch {
        row(target, "failed: \(error)", "-", "-", false)
    }
}
