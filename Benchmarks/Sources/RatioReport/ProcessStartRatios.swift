import BenchmarkFixtures
import Defaults
import Foundation

// P13: a whole command-line process that opens the standard suite, reads one key of a 100-key
// file and exits, against the same process reading it with Foundation's `UserDefaults.standard`.
// Both are this executable (`--standard-read-child defaults|foundation`), so that they load the
// same code and differ only in the library they read with.

/// The child's side: reads `setting-1` with the library or with Foundation and exits, with status
/// 0 only when it found the value. Returns when the arguments ask for no child.
func runStandardReadChildIfAsked() {
    let arguments = CommandLine.arguments
    guard arguments.count == 3, arguments[1] == "--standard-read-child" else { return }
    let found: Bool
    if arguments[2] == "defaults" {
        found = !Defaults[Defaults.Key<String>("setting-1", default: "")].isEmpty
    } else {
        found = UserDefaults.standard.string(forKey: "setting-1") != nil
    }
    exit(found ? 0 : 1)
}

/// The medians of `count` runs of two whole processes timed in alternation, so that a busy
/// moment of the machine weighs on both alike.
func alternatingMedians(
    _ count: Int, _ first: () throws -> Duration, _ second: () throws -> Duration
) rethrows -> (Duration, Duration) {
    var firstTimes: [Duration] = []
    var secondTimes: [Duration] = []
    for _ in 0..<count {
        firstTimes.append(try first())
        secondTimes.append(try second())
    }
    return (firstTimes.sorted()[count / 2], secondTimes.sorted()[count / 2])
}

@MainActor func measureStandardReadProcess() {
    let target = "P13 a process opening the standard suite, reading 1 key of 100, exiting, vs UserDefaults (≤ 1.0×)"
    let home = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: home, userDefaultsSuites: [])
    do {
        // The standard suite of both is `<process name>.plist` in `$XDG_CONFIG_HOME`.
        let name = ProcessInfo.processInfo.processName
        try Fixtures.keySuite(count: 100, in: home, name: name).flush()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = home.path
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        func run(_ reader: String) throws -> Duration {
            let (time, status) = try timedRun(executable, ["--standard-read-child", reader], environment: environment)
            guard status == 0 else {
                throw CocoaError(
                    .fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: "\(reader) did not find setting-1"])
            }
            return time
        }
        // Alternating pairs, so that both see the same machine.
        let (oursMedian, baselineMedian) = try alternatingMedians(
            40, { try run("defaults") }, { try run("foundation") })
        row(
            target, format(oursMedian), format(baselineMedian),
            String(format: "%.2f×", ratio(oursMedian, baselineMedian)), ratio(oursMedian, baselineMedian) <= 1)
    } catch {
        row(target, "failed: \(error)", "-", "-", false)
    }
}
