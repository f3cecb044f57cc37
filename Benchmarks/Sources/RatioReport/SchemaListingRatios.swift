import BenchmarkFixtures
import Defaults
import Foundation

// P15: `defaults keys <domain>` of a domain of 1,000 keys, every one declared with a description
// (and the integers with a range) and exported as its schema, against `defaults read <domain>` of
// the same domain: listing the keys with their meaning costs no more than printing the values.

@MainActor func measureSchemaListing() {
    let target = "P15 `defaults keys <domain>` of 1,000 keys with a schema vs `defaults read <domain>` (≤ 1.0×)"
    guard let defaults = defaultsBinary() else {
        row(target, "not built", "-", "run `swift build -c release --product defaults` in ..", nil)
        return
    }
    let home = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: home, userDefaultsSuites: [])
    let domain = "com.example.schema-listing"
    do {
        let suite = try Fixtures.keySuite(count: 1_000, in: home, name: domain)
        // Kept until the schema is written, as an app's `static let` keys are: a key that is
        // gone leaves its default out of the schema.
        var keys: [Defaults.Keys] = []
        for index in 0..<1_000 {
            let name = "setting-\(index)"
            let description = "What setting \(index) changes, in a sentence of ordinary length."
            switch index % 6 {
            case 0:
                keys.append(
                    Defaults.Key<Int>(name, default: 0, suite: suite, description: description, range: 0...100_000))
            case 1: keys.append(Defaults.Key<String>(name, default: "", suite: suite, description: description))
            case 2: keys.append(Defaults.Key<Double>(name, default: 0, suite: suite, description: description))
            case 3: keys.append(Defaults.Key<Bool>(name, default: false, suite: suite, description: description))
            case 4: keys.append(Defaults.Key<Date>(name, default: .distantPast, suite: suite, description: description))
            default: keys.append(Defaults.Key<[Int]>(name, default: [], suite: suite, description: description))
            }
        }
        let dataHome = home.appendingPathComponent("data", isDirectory: true)
        try Defaults.exportSchema(
            of: suite, to: dataHome.appendingPathComponent("defaults/schemas", isDirectory: true))
        withExtendedLifetime(keys) {}
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = home.path
        environment["XDG_DATA_HOME"] = dataHome.path
        environment["XDG_DATA_DIRS"] = home.appendingPathComponent("no-system-data").path
        environment["XDG_CONFIG_DIRS"] = home.appendingPathComponent("no-administrator").path
        func run(_ arguments: [String]) throws -> Duration {
            let (time, status) = try timedRun(defaults, arguments, environment: environment)
            guard status == 0 else {
                throw CocoaError(
                    .executableLoad, userInfo: [NSFilePathErrorKey: "defaults \(arguments.joined(separator: " "))"])
            }
            return time
        }
        // Alternating pairs, so that both see the same machine.
        let (oursMedian, baselineMedian) = try alternatingMedians(
            21, { try run(["keys", domain]) }, { try run(["read", domain]) })
        row(
            target, format(oursMedian), format(baselineMedian),
            String(format: "%.2f×", ratio(oursMedian, baselineMedian)), ratio(oursMedian, baselineMedian) <= 1)
    } catch {
        row(target, "failed: \(error)", "-", "-", false)
    }
}
