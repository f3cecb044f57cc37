import Foundation

/// The folder of this build's products (`.build/<triple>/debug`): the running test binary's, where
/// the package's executables and `Modules/` are built.
public let builtProductsDirectory: URL = {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        .deletingLastPathComponent()
    // On Apple platforms the tests run inside an .xctest bundle.
    while directory.pathExtension == "xctest" || ["MacOS", "Contents"].contains(directory.lastPathComponent) {
        directory = directory.deletingLastPathComponent()
    }
    return directory
}()

/// The path of `name`, an executable of this package built beside the running test binary (the
/// test target depends on its target, so it is built first).
public func builtExecutable(_ name: String) -> String {
    builtProductsDirectory.appendingPathComponent(name).path
}
