import Benchmark
import BenchmarkFixtures
@_spi(Testing) import Defaults
import Foundation

// Allocation counts of the hot paths, checked in CI against Thresholds/ (times never are: they
// depend on the machine; allocation counts do not). Names have no spaces: `thresholds check`
// looks for `<target>.<name>.p90.json` with the name as written. `.ci/run` runs
// `swift package benchmark thresholds check --target Allocations`; after an intended change,
// `swift package --allow-writing-to-package-directory benchmark thresholds update --target Allocations --path Thresholds/6.3`.

let benchmarks: @Sendable () -> Void = {
    let directory = Fixtures.makeDirectory()
    Fixtures.removeAtExit(directory: directory, userDefaultsSuites: [])

    // A delay longer than any run, so that no background write allocates while a read or write
    // is counted.
    let suite = FileSuite(name: "allocations", directory: directory, arguments: [], coalescingDelay: .seconds(3_600))
    let intKey = Defaults.Key<Int>("intKey", default: 0, suite: suite)
    let profileKey = Defaults.Key<Profile>("profile", default: Profile(name: "", age: 0), suite: suite)
    Defaults[intKey] = 42
    Defaults[profileKey] = Profile(name: "Ada", age: 36)
    let large = try? Fixtures.tenThousandKeySuite(in: directory)

    /// Allocation counts only, with `tolerance` allocations of room for what the suite's watcher
    /// thread and write timer may allocate at the same moment (they react to the suite's writes).
    func counting(_ scalingFactor: BenchmarkScalingFactor, tolerance: Int) -> Benchmark.Configuration {
        .init(
            metrics: [.mallocCountTotal],
            scalingFactor: scalingFactor,
            maxDuration: .seconds(2),
            maxIterations: 100,
            thresholds: [.mallocCountTotal: .init(absolute: [.p90: tolerance])]
        )
    }

    Benchmark("read_Int", configuration: counting(.kilo, tolerance: 0)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(Defaults[intKey])
        }
    }

    Benchmark("read_CodableStruct", configuration: counting(.kilo, tolerance: 0)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(Defaults[profileKey])
        }
    }

    Benchmark("write_Int", configuration: counting(.kilo, tolerance: 20)) { benchmark in
        for index in benchmark.scaledIterations {
            Defaults[intKey] = index
        }
    }

    Benchmark("flush_10000Keys_afterOneChange", configuration: counting(.one, tolerance: 50)) { benchmark in
        guard let large else { return }
        large.set(benchmark.currentIteration, forKey: "changed")
        try large.flush()
    }

    Benchmark("load_10000KeyFile", configuration: counting(.one, tolerance: 100)) { _ in
        guard let large else { return }
        let loaded = FileSuite(fileURL: large.fileURL, arguments: [])
        blackHole(loaded.object(forKey: "setting-1"))
    }
}

struct Profile: Codable, Defaults.Serializable {
    var name: String
    var age: Int
}
