import Benchmark
import BenchmarkFixtures
@_spi(Testing) import Defaults
import Foundation

// Each performance target (issue 11) is measured beside its baseline: the benchmark named "… (baseline …)"
// next to it. Times marked * are per operation (inner loop of `scalingFactor`).

let benchmarks: @Sendable () -> Void = {
    let directory = Fixtures.makeDirectory()
    let smallName = Fixtures.userDefaultsSuiteName("small")
    let largeName = Fixtures.userDefaultsSuiteName("large")
    // Foundation writes the baselines' files to `~/.config` (or `$XDG_CONFIG_HOME`): removed at exit.
    Fixtures.removeAtExit(directory: directory, userDefaultsSuites: [smallName, largeName])

    let suite = FileSuite(name: "bench", directory: directory, arguments: [])
    let intKey = Defaults.Key<Int>("intKey", default: 0, suite: suite)
    Defaults[intKey] = 42
    let dictionary: [String: Any] = ["intKey": 42, "other": "x"]
    let userDefaults = UserDefaults(suiteName: smallName)
    userDefaults?.set(42, forKey: "intKey")

    let fast = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: .seconds(2)
    )

    // MARK: P1: a read. Target ≤ 1.0× the dictionary.

    Benchmark("P1 Defaults[.intKey] read (FileSuite)", configuration: fast) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(Defaults[intKey])
        }
    }
    Benchmark("P1 [String: Any] lookup and cast (baseline)", configuration: fast) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(dictionary["intKey"] as? Int)
        }
    }
    Benchmark("P1 UserDefaults.integer(forKey:) (baseline)", configuration: fast) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(userDefaults?.integer(forKey: "intKey"))
        }
    }

    // MARK: P3: a write. Target ≤ 1/40 of UserDefaults.set.

    Benchmark("P3 Defaults[.intKey] = v (FileSuite)", configuration: fast) { benchmark in
        for index in benchmark.scaledIterations {
            Defaults[intKey] = index
        }
    }
    Benchmark("P3 UserDefaults.set(_:forKey:) (baseline)", configuration: fast) { benchmark in
        for index in benchmark.scaledIterations {
            userDefaults?.set(index, forKey: "intKey")
        }
    }

    // MARK: P4: coalescing and flushing. Target 1 file write; a flush ≥ 30× faster than synchronize().

    let slow = Benchmark.Configuration(
        metrics: [.wallClock, .syscalls],
        timeUnits: .milliseconds,
        maxDuration: .seconds(3),
        maxIterations: 50
    )
    let fileWrites = BenchmarkMetric.custom("file writes", polarity: .prefersSmaller)

    Benchmark(
        "P4 10,000 writes over 100 keys, then flush (FileSuite)",
        configuration: .init(
            metrics: [.wallClock, fileWrites], timeUnits: .milliseconds, maxDuration: .seconds(3), maxIterations: 50
        )
    ) { benchmark in
        let suite = FileSuite(name: "coalesce-\(UUID().uuidString)", directory: directory, arguments: [])
        benchmark.startMeasurement()
        for index in 0..<10_000 {
            suite.set(index, forKey: "key\(index % 100)")
        }
        try suite.flush()
        benchmark.stopMeasurement()
        benchmark.measurement(fileWrites, suite.writeCount)
        try? FileManager.default.removeItem(at: suite.fileURL)
    }

    let large = try? Fixtures.tenThousandKeySuite(in: directory)
    let largeUserDefaults = Fixtures.tenThousandKeyUserDefaults(name: largeName)

    Benchmark("P4 flush of a 10,000-key suite after one change (FileSuite)", configuration: slow) { benchmark in
        guard let large else { return }
        large.set(benchmark.currentIteration, forKey: "changed")
        try large.flush()
    }
    Benchmark("P4 UserDefaults.synchronize() of 10,000 keys after one change (baseline)", configuration: slow) {
        benchmark in
        largeUserDefaults?.set(benchmark.currentIteration, forKey: "changed")
        blackHole(largeUserDefaults?.synchronize())
    }

    // MARK: P5: cold load. Target ≤ 1/15 of PropertyListSerialization's decode.

    Benchmark("P5 cold load of a 10,000-key file (FileSuite)", configuration: slow) { _ in
        guard let large else { return }
        let loaded = FileSuite(fileURL: large.fileURL, arguments: [])
        blackHole(loaded.object(forKey: "setting-1"))
    }
    Benchmark("P5 read + PropertyListSerialization decode of the same file (baseline)", configuration: slow) { _ in
        guard let large, let data = try? Data(contentsOf: large.fileURL) else { return }
        blackHole(try? PropertyListSerialization.propertyList(from: data, format: nil))
    }

    // MARK: P7: memory. Target ≤ 2× the file size, resident.
    // Resident growth needs a fresh process (here, freed memory of earlier benchmarks is reused):
    // `swift run -c release RatioReport` measures it so. This reports what a load allocates in
    // all (an upper bound on what it keeps) beside the file size.

    let fileSize = BenchmarkMetric.custom("file size (bytes)", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark(
        "P7 bytes allocated by loading a 10,000-key suite vs its file size",
        configuration: .init(
            metrics: [.mallocBytesCount, .mallocCountTotal, fileSize], maxIterations: 10
        )
    ) { benchmark in
        guard let large else { return }
        let loaded = FileSuite(fileURL: large.fileURL, arguments: [])
        blackHole(loaded.object(forKey: "setting-1"))
        let size = (try? FileManager.default.attributesOfItem(atPath: large.fileURL.path)[.size] as? Int) ?? 0
        benchmark.measurement(fileSize, size)
    }

    observationBenchmarks()
}
