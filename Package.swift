// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "swift-defaults",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Defaults", targets: ["Defaults"]),
        .library(name: "DefaultsCombine", targets: ["DefaultsCombine"]),
        .library(name: "DefaultsMacros", targets: ["DefaultsMacros"]),
        .executable(name: "defaults-example", targets: ["DefaultsExample"]),
        // Makes `Defaults.exportSchema()` list every key a target declares, used yet or not.
        .plugin(name: "DefaultsSchemaPlugin", targets: ["DefaultsSchemaPlugin"]),
        // The `defaults` command. Its target and module are `DefaultsCommand`, not `defaults`:
        // a target `defaults` would build `defaults.build` and `defaults.swiftmodule` beside the
        // library's `Defaults.build` and `Modules/Defaults.swiftmodule`, names that clash on a
        // case-insensitive file system (macOS). As it is, `.build/<configuration>/` holds the
        // executable `defaults` and its `defaults.product` folder, `DefaultsCommand.build`, and
        // for the library `Defaults.build` and `Modules/Defaults.swiftmodule`: nothing named
        // `Defaults` alone, and no two names that differ only by case.
        .executable(name: "defaults", targets: ["DefaultsCommand"]),
        // `defaults-sync status`: a command of its own, so that `defaults` builds without
        // postgres-nio and its TLS stack.
        .executable(name: "defaults-sync", targets: ["DefaultsSyncCommand"]),
        // `defaults edit`'s server: a domain's settings in the browser, on loopback.
        .executable(name: "defaults-edit-server", targets: ["DefaultsEditServer"]),
        // A swift-configuration provider that reads a suite: `DefaultsProvider`.
        .library(name: "DefaultsConfiguration", targets: ["DefaultsConfiguration"]),
        // Syncs `iCloud` keys between machines through PostgreSQL.
        .library(name: "DefaultsPostgres", targets: ["DefaultsPostgres"]),
        // End-to-end encryption of what any sync store holds.
        .library(name: "DefaultsSyncEncryption", targets: ["DefaultsSyncEncryption"]),
        // Syncs `iCloud` keys through `defaults-sync-server` (the `SyncService/` package).
        .library(name: "DefaultsSyncClient", targets: ["DefaultsSyncClient"]),
        // What the sync service, its clients and the PostgreSQL store share (Foundation only): the
        // messages the service and its clients exchange, and the reconnection policy.
        .library(name: "DefaultsSyncProtocol", targets: ["DefaultsSyncProtocol"]),
        // The PostgreSQL layer `DefaultsPostgres` and the sync service share (tables, numbering,
        // upsert, refusals, migrations), for the server's package: it links this, not
        // `DefaultsPostgres` and the engine.
        .library(name: "DefaultsSyncSQL", targets: ["DefaultsSyncSQL"]),
        // An in-memory sync store and server, for applications' tests of their sync code.
        .library(name: "DefaultsSyncTesting", targets: ["DefaultsSyncTesting"]),
        // The schema of a domain's keys (Foundation only), for tools that read or write schemas.
        .library(name: "DefaultsSchema", targets: ["DefaultsSchema"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"604.0.0"),
        // `swift package generate-documentation` for the DocC catalogs.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        // The sync service's client speaks WebSocket on SwiftNIO itself (`ServiceSocket`).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // A fast, dependency-free property-list reader and writer (XML, binary, old-style text).
        .target(name: "DefaultsPropertyList"),
        // The file layer: bounded reads, atomic writes, locks, ownership; every file the library
        // reads or writes goes through it. Its API has `package` access: no product exposes it.
        .target(name: "DefaultsFiles", dependencies: ["DefaultsPropertyList"]),
        // The schema format: every key's type, default, description and allowed values; Foundation only.
        .target(name: "DefaultsSchema"),
        // The one rule for printing outside text: controls escaped visibly (`package` access, no product).
        .target(name: "DefaultsTerminalText"),
        // The storage core and its backends (a file, memory, `UserDefaults`): suites of
        // property-list values, administrator's layers, changes; it knows no key. `Defaults`
        // re-exports it.
        .target(
            name: "DefaultsStorage",
            dependencies: [
                "DefaultsFiles",
                "DefaultsPropertyList",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The sync engine, its journal, rules and the store protocol: it knows keys by name only,
        // and storage by its suites. `Defaults` re-exports it and reaches it as `Defaults.iCloud`.
        .target(
            name: "DefaultsSync",
            dependencies: [
                "DefaultsFiles",
                "DefaultsPropertyList",
                "DefaultsStorage",
                "DefaultsSyncProtocol",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Defaults",
            dependencies: [
                "DefaultsFiles",
                "DefaultsPropertyList",
                "DefaultsSchema",
                "DefaultsStorage",
                "DefaultsSync",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "DefaultsCombine",
            dependencies: [
                "Defaults",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
            ]
        ),
        // The compiler plugin behind `@ObservableDefault`.
        .macro(
            name: "DefaultsMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // `@ObservableDefault` for `@Observable` classes.
        .target(name: "DefaultsMacros", dependencies: ["Defaults", "DefaultsMacrosPlugin"]),
        // The README's example program. `DefaultsSchemaPlugin` is applied in Examples/, a package
        // apart: SwiftPM would build a plugin used here, and swift-syntax for its tool, in every
        // package that depends on this one.
        .executableTarget(name: "DefaultsExample", dependencies: ["Defaults"]),
        // Finds the keys a target's sources declare, for `DefaultsSchemaPlugin`.
        .executableTarget(
            name: "DefaultsKeyFinder",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
            ]
        ),
        .plugin(name: "DefaultsSchemaPlugin", capability: .buildTool(), dependencies: ["DefaultsKeyFinder"]),
        // End-to-end encryption around any sync store.
        .target(
            name: "DefaultsSyncEncryption",
            dependencies: [
                "Defaults",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `InMemorySyncStore` and `InMemorySyncServer`: sync without a database, for tests.
        .target(name: "DefaultsSyncTesting", dependencies: ["Defaults"]),
        // What the sync service, its clients and the PostgreSQL store share, Foundation only: the
        // service's messages (JSON over WebSocket text frames) and the reconnection policy.
        .target(name: "DefaultsSyncProtocol"),
        // `SyncServiceStore`: the sync service's client for `Defaults.iCloud`.
        .target(
            name: "DefaultsSyncClient",
            dependencies: [
                "Defaults",
                "DefaultsSyncProtocol",
                "DefaultsSyncEncryption",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The one SQL layer of both PostgreSQL backends: the values tables and their numbering,
        // migrations, the upsert and which record wins, the queries, refused records and the
        // database URL. No engine: the server links it alone.
        .target(
            name: "DefaultsSyncSQL",
            dependencies: [
                "DefaultsSyncProtocol",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The PostgreSQL sync store for `Defaults.iCloud`.
        .target(
            name: "DefaultsPostgres",
            dependencies: [
                "Defaults",
                "DefaultsSyncProtocol",
                "DefaultsSyncSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What `defaults` and its settings editor share: domains and their files, schemas, the
        // administrator's layers, parsing and checking values, explaining a key, printing
        // (`package` access, no product).
        .target(
            name: "DefaultsCommandCore",
            dependencies: [
                "Defaults",
                "DefaultsFiles",
                "DefaultsPropertyList",
                "DefaultsSchema",
                "DefaultsTerminalText",
            ]
        ),
        .executableTarget(
            name: "DefaultsCommand",
            dependencies: [
                "Defaults",
                "DefaultsCommandCore",
                "DefaultsFiles",
                "DefaultsPropertyList",
                "DefaultsSchema",
                "DefaultsTerminalText",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The settings editor: its model over `DefaultsCommandCore`, its request gate and its
        // HTTP server (NIO), for `defaults-edit-server`.
        .target(
            name: "DefaultsEditor",
            dependencies: [
                "Defaults",
                "DefaultsCommandCore",
                "DefaultsPropertyList",
                "DefaultsSchema",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "DefaultsEditServer",
            dependencies: [
                "DefaultsCommandCore",
                "DefaultsEditor",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "DefaultsSyncCommand",
            dependencies: [
                "Defaults",
                "DefaultsPostgres",
                "DefaultsSyncClient",
                "DefaultsSyncProtocol",
                "DefaultsSyncSQL",
                "DefaultsTerminalText",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `DefaultsProvider`: a suite as a provider of a swift-configuration `ConfigReader`.
        .target(
            name: "DefaultsConfiguration",
            dependencies: [
                "Defaults",
                "DefaultsPropertyList",
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            // As swift-configuration builds: its protocols' async requirements run on the caller's
            // executor (`nonisolated(nonsending)`), and this target's implementations must match.
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
        ),
        // What every test target shares: the child-process launcher and the polling helper. A
        // regular target that no product depends on, so it is never shipped.
        .target(
            name: "TestSupport",
            dependencies: ["TestSupportStartup", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport"
        ),
        // Captures the library's log before any test runs (a C constructor; see its source).
        .target(name: "TestSupportStartup", path: "Tests/TestSupportStartup"),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"]),
        // A child process that tests spawn to exercise real processes.
        .executableTarget(name: "DefaultsTestHelper", dependencies: ["Defaults"], path: "Tests/Helper"),
        .testTarget(name: "DefaultsPropertyListTests", dependencies: ["DefaultsPropertyList", "TestSupport"]),
        .testTarget(
            name: "DefaultsTests",
            dependencies: [
                "Defaults", "DefaultsFiles", "DefaultsSchema", "DefaultsStorage", "DefaultsSync", "DefaultsTestHelper",
                "TestSupport",
            ]),
        .testTarget(name: "DefaultsCombineTests", dependencies: ["DefaultsCombine", "TestSupport"]),
        // Code written for the Defaults library, as its users write it, in Swift 6 mode: that it
        // compiles unchanged is the main check; its tests assert that it behaves.
        .testTarget(name: "DefaultsCompatibilityTests", dependencies: ["Defaults", "TestSupport"]),
        // A child process that the sync tests spawn: one "machine" syncing through PostgreSQL.
        .executableTarget(
            name: "DefaultsSyncTestHelper",
            dependencies: ["Defaults", "DefaultsPostgres", "DefaultsSyncEncryption", "DefaultsSyncClient"],
            path: "Tests/SyncHelper"
        ),
        // Needs a PostgreSQL server; starts its own throwaway cluster (skips without one).
        .testTarget(
            name: "DefaultsPostgresTests",
            dependencies: [
                "Defaults", "DefaultsPostgres", "DefaultsSyncEncryption", "DefaultsSyncTestHelper",
                "DefaultsSyncCommand", "DefaultsSyncProtocol", "DefaultsSyncSQL",
                "TestSupport",
            ]
        ),
        // A child process that the in-memory sync tests spawn: one machine syncing through an
        // `InMemorySyncServer` of its own, with the test driving the other machines on that server.
        .executableTarget(
            name: "DefaultsSyncTestingHelper",
            dependencies: ["Defaults", "DefaultsPropertyList", "DefaultsSyncEncryption", "DefaultsSyncTesting"],
            path: "Tests/SyncTestingHelper"
        ),
        .testTarget(
            name: "DefaultsSyncTestingTests",
            dependencies: [
                "Defaults", "DefaultsPropertyList", "DefaultsSyncEncryption", "DefaultsSyncProtocol",
                "DefaultsSyncTesting", "DefaultsSyncTestingHelper", "TestSupport",
            ]
        ),
        // The sync service's client in process: its token source, its buffer and its reconnection,
        // and its connection against a scripted server on loopback (NIO's WebSocket server).
        .testTarget(
            name: "DefaultsSyncClientTests",
            dependencies: [
                "Defaults", "DefaultsSyncClient", "DefaultsSyncProtocol", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ]
        ),
        // Runs the built `defaults` executable (and `defaults-edit-server`, which `defaults edit`
        // runs); depending on their targets gets them built.
        .testTarget(
            name: "DefaultsCommandTests",
            dependencies: [
                "DefaultsCommand", "DefaultsEditServer", "DefaultsExample", "DefaultsKeyFinder", "Defaults",
                "DefaultsPropertyList",
                "DefaultsSchema", "DefaultsTestHelper", "DefaultsSyncTestingHelper", "TestSupport",
            ]
        ),
        // Spawns the `defaults` command as a writer in another process; depending on its target
        // gets it built.
        .testTarget(
            name: "DefaultsConfigurationTests",
            dependencies: [
                "DefaultsConfiguration", "Defaults", "DefaultsCommand", "DefaultsPropertyList", "TestSupport",
            ]
        ),
        // Compiles every Swift block of README.md against the modules built for the other tests.
        .testTarget(
            name: "ReadmeTests",
            dependencies: [
                "Defaults", "DefaultsCombine", "DefaultsMacros", "DefaultsConfiguration", "DefaultsPostgres",
                "DefaultsPropertyList", "DefaultsSchema", "DefaultsSyncClient", "DefaultsSyncEncryption",
                "DefaultsSyncTesting", "TestSupport",
            ]
        ),
        .testTarget(
            name: "DefaultsMacrosTests",
            dependencies: [
                "DefaultsMacros",
                "DefaultsMacrosPlugin",
                "DefaultsTestHelper",
                "TestSupport",
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
