// swift-tools-version: 6.1
// The benchmarks of swift-defaults, in a package of their own so that the library does not
// depend on the benchmark package. Run from this directory:
//
//     swift package benchmark                 # package-benchmark's tables (P1, P3, P4, P5, P7)
//     swift run -c release RatioReport        # the targets of README.md, met or not
//     swift package benchmark thresholds check --target Allocations --path "$PWD/Thresholds/6.3"  # CI
import PackageDescription

let package = Package(
    name: "swift-defaults-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-defaults", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The data and suites both executables measure.
        .target(
            name: "BenchmarkFixtures",
            dependencies: [.product(name: "Defaults", package: "swift-defaults")]
        ),
        .executableTarget(
            name: "FileSuiteBenchmarks",
            dependencies: [
                "BenchmarkFixtures",
                .product(name: "Defaults", package: "swift-defaults"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/FileSuiteBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Allocation counts of the hot paths, checked in CI against Thresholds/.
        .executableTarget(
            name: "Allocations",
            dependencies: [
                "BenchmarkFixtures",
                .product(name: "Defaults", package: "swift-defaults"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/Allocations",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // P8, P10, P11, P14, P16, P17, P19: sync latency, convergence and failover through PostgreSQL and
        // through the sync service (built from ../SyncService), between real processes.
        .executableTarget(
            name: "SyncLatency",
            dependencies: [
                .product(name: "Defaults", package: "swift-defaults"),
                .product(name: "DefaultsPostgres", package: "swift-defaults"),
                .product(name: "DefaultsSyncClient", package: "swift-defaults"),
                .product(name: "DefaultsSyncProtocol", package: "swift-defaults"),
            ]
        ),
        // P18: `defaults edit`'s page in headless Chromium (the server built from this package).
        .executableTarget(
            name: "EditorLatency",
            dependencies: [.product(name: "Defaults", package: "swift-defaults")]
        ),
        .executableTarget(
            name: "RatioReport",
            dependencies: ["BenchmarkFixtures", .product(name: "Defaults", package: "swift-defaults")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
