// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "swift-defaults",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Defaults", targets: ["Defaults"]),
        .library(name: "DefaultsCombine", targets: ["DefaultsCombine"]),
        .executable(name: "defaults-example", targets: ["DefaultsExample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        // A fast, dependency-free property-list reader and writer (XML, binary, old-style text).
        .target(name: "DefaultsPropertyList"),
        .target(
            name: "Defaults",
            dependencies: [
                "DefaultsPropertyList",
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
        .executableTarget(name: "DefaultsExample", dependencies: ["Defaults"]),
        // A child process that tests spawn to exercise real processes.
        .executableTarget(name: "DefaultsTestHelper", dependencies: ["Defaults"], path: "Tests/Helper"),
        .testTarget(name: "DefaultsPropertyListTests", dependencies: ["DefaultsPropertyList"]),
        .testTarget(name: "DefaultsTests", dependencies: ["Defaults", "DefaultsTestHelper"]),
        .testTarget(name: "DefaultsCombineTests", dependencies: ["DefaultsCombine"]),
    ],
    swiftLanguageModes: [.v6]
)
