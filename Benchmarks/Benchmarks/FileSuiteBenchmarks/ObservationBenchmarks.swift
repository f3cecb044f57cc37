import Benchmark
import Defaults

/// The cost of a write with 0, 1 and 1,000 observers on its key (an in-memory suite, so that only
/// the observation is measured). P6, the cross-process latency, is in `RatioReport`.
func observationBenchmarks() {
    for observerCount in [0, 1, 1_000] {
        let name = observerCount == 0 ? "write with no observer (baseline)" : "write with \(observerCount) observer(s)"
        Benchmark(name, configuration: .init(metrics: [.wallClock, .mallocCountTotal], maxDuration: .seconds(2))) {
            benchmark in
            let suite = InMemorySuite()
            let key = Defaults.Key<Int>("observed", default: 0, suite: suite)
            let observations = (0..<observerCount).map { _ in Defaults.observe(key, options: []) { _ in } }
            benchmark.startMeasurement()
            for index in benchmark.scaledIterations {
                Defaults[key] = index
            }
            benchmark.stopMeasurement()
            observations.forEach { $0.invalidate() }
        }
    }
}
