// swift-tools-version: 6.2
// `defaults-sync-server`: the sync service that `SyncServiceStore` (DefaultsSyncClient) connects
// to. A package of its own, as `Benchmarks/` is, so that a program depending on `Defaults` never
// fetches nor builds the server's dependencies (Hummingbird, jwt-kit, swift-prometheus). A
// package trait would keep them out of the build but not out of dependency resolution. Run
// from this directory:
//
//     swift run defaults-sync-server serve --database-url URL --port 8080 --token-key-file FILE
//     swift test                       # starts PostgreSQL, server instances and nginx itself
import PackageDescription

let package = Package(
    name: "swift-defaults-sync-service",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "defaults-sync-server", targets: ["DefaultsSyncServerCommand"])
    ],
    dependencies: [
        .package(name: "swift-defaults", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // The server: authentication, storage with row-level security, fan-out between
        // instances, quotas and limits. A library, so that tests and benchmarks can read its
        // types; the executable is a thin command line around it.
        .target(
            name: "DefaultsSyncServer",
            dependencies: [
                .product(name: "DefaultsSyncProtocol", package: "swift-defaults"),
                // The SQL it shares with `PostgresSyncStore`, without `DefaultsPostgres` and the engine.
                .product(name: "DefaultsSyncSQL", package: "swift-defaults"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                "CProcessHeap",
            ]
        ),
        // glibc's heap totals, for the heap metrics (its <malloc.h> is not in Swift's Glibc).
        .target(name: "CProcessHeap"),
        .executableTarget(
            name: "DefaultsSyncServerCommand",
            dependencies: [
                "DefaultsSyncServer",
                .product(name: "DefaultsSyncProtocol", package: "swift-defaults"),
                .product(name: "DefaultsSyncSQL", package: "swift-defaults"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The main package's test support, its sync helper (one machine, now also through the
        // service) and its PostgreSQL fixture, through links under Tests/: one copy of each.
        .target(
            name: "TestSupport",
            dependencies: ["TestSupportStartup", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"
        ),
        .target(name: "TestSupportStartup", path: "Tests/TestSupportStartup"),
        // Tests/SyncHelper as this package builds it, under its own name: CI builds both packages
        // into one build folder, where the main package's DefaultsSyncTestHelper (which takes
        // `--clock-offset`) must not be overwritten by this one (which cannot).
        .executableTarget(
            name: "DefaultsSyncServiceTestHelper",
            dependencies: [
                .product(name: "Defaults", package: "swift-defaults"),
                .product(name: "DefaultsPostgres", package: "swift-defaults"),
                .product(name: "DefaultsSyncEncryption", package: "swift-defaults"),
                .product(name: "DefaultsSyncClient", package: "swift-defaults"),
            ],
            path: "Tests/SyncHelper",
            swiftSettings: [.define("SYNC_SERVICE_PACKAGE")]
        ),
        // Starts PostgreSQL, server instances, machines and nginx as real processes.
        .testTarget(
            name: "DefaultsSyncServerTests",
            dependencies: [
                "DefaultsSyncServer", "DefaultsSyncServerCommand", "DefaultsSyncServiceTestHelper", "TestSupport",
                .product(name: "DefaultsSyncClient", package: "swift-defaults"),
                .product(name: "DefaultsSyncProtocol", package: "swift-defaults"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The machines it starts are DefaultsSyncServiceTestHelper (`SyncProcess`).
            swiftSettings: [.define("SYNC_SERVICE_PACKAGE")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
