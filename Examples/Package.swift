// swift-tools-version: 6.1
// Programs that use swift-defaults as an application does, in a package of their own. SwiftPM
// runs a package's build-tool plugins for every target it has, used or not: were this example in
// swift-defaults' own package, every package that depends on swift-defaults would build
// `DefaultsSchemaPlugin`'s tool, and swift-syntax with it. Run from the directory above:
//
//     swift run --package-path Examples schema-plugin-example
//     swift run defaults keys schema-plugin-example
import PackageDescription

let package = Package(
    name: "swift-defaults-examples",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "schema-plugin-example", targets: ["SchemaPluginExample"])
    ],
    dependencies: [
        .package(name: "swift-defaults", path: "..")
    ],
    targets: [
        // `Defaults.exportSchema()` lists every key the target declares, used yet or not.
        .executableTarget(
            name: "SchemaPluginExample",
            dependencies: [.product(name: "Defaults", package: "swift-defaults")],
            plugins: [.plugin(name: "DefaultsSchemaPlugin", package: "swift-defaults")]
        )
    ],
    swiftLanguageModes: [.v6]
)
