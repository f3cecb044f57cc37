import Foundation
import TestSupport

/// `swiftc`, pointed at the modules of this package's build, as a user's package would see them.
enum SwiftCompiler {
    /// `swiftc` beside the `swift` on `PATH`.
    static let path: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        .map { "\($0)/swiftc" }.first { FileManager.default.isExecutableFile(atPath: $0) }

    static var isAvailable: Bool { path != nil }

    /// Type-checks `file` (which also expands macros) in Swift 6 mode, as a program importing this
    /// package's libraries, or as a package manifest.
    static func typecheck(_ file: URL, asManifest: Bool) throws -> ChildProcess.Result {
        guard let path else { throw CocoaError(.fileNoSuchFile) }
        var arguments = ["-typecheck", "-swift-version", "6", file.path]
        if asManifest {
            let toolchain = URL(fileURLWithPath: path).resolvingSymlinksInPath()
                .deletingLastPathComponent().deletingLastPathComponent()
            arguments += [
                "-I", toolchain.appendingPathComponent("lib/swift/pm/ManifestAPI").path,
                "-package-description-version", "6.1",
            ]
        } else {
            arguments += moduleArguments
        }
        // The driver leaves a `TemporaryDirectory.*` behind at each run: in a folder of the test's.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("swiftc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        return try ChildProcess.run(path, arguments, environment: ["TMPDIR": scratch.path], timeout: .seconds(300))
    }

    /// Where the compiler finds the built Swift modules, the C modules they import (a target's
    /// own `include/module.modulemap`, else the one the build generated for it), and the
    /// `@ObservableDefault` macro's plugin.
    static let moduleArguments: [String] = {
        let products = builtProductsDirectory
        let files = FileManager.default
        var arguments = ["-I", products.appendingPathComponent("Modules").path]
        var ownModuleMaps = Set<String>()
        let checkouts = products.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("checkouts")
        for package in (try? files.contentsOfDirectory(atPath: checkouts.path)) ?? [] {
            let sources = checkouts.appendingPathComponent(package).appendingPathComponent("Sources")
            for target in (try? files.contentsOfDirectory(atPath: sources.path)) ?? [] {
                let moduleMap = sources.appendingPathComponent("\(target)/include/module.modulemap")
                if files.fileExists(atPath: moduleMap.path) {
                    ownModuleMaps.insert(target)
                    arguments += ["-Xcc", "-fmodule-map-file=\(moduleMap.path)"]
                }
            }
        }
        // `<target>.build/module.modulemap`; `-tool` folders are the same targets built for plugins.
        for folder in ((try? files.contentsOfDirectory(atPath: products.path)) ?? []).sorted() {
            guard folder.hasSuffix(".build"), !folder.hasSuffix("-tool.build") else { continue }
            let moduleMap = products.appendingPathComponent("\(folder)/module.modulemap")
            if !ownModuleMaps.contains(String(folder.dropLast(".build".count))),
                files.fileExists(atPath: moduleMap.path)
            {
                arguments += ["-Xcc", "-fmodule-map-file=\(moduleMap.path)"]
            }
        }
        let plugin = products.appendingPathComponent("DefaultsMacrosPlugin-tool")
        if files.isExecutableFile(atPath: plugin.path) {
            arguments += ["-load-plugin-executable", "\(plugin.path)#DefaultsMacrosPlugin"]
        }
        return arguments
    }()
}
