import Foundation

/// Runs the package's `DefaultsTestHelper` executable, built beside the test bundle.
enum HelperProcess {
    static var url: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        // On Apple platforms the tests run inside an .xctest bundle.
        while ["xctest"].contains(directory.pathExtension)
            || ["MacOS", "Contents"].contains(directory.lastPathComponent)
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("DefaultsTestHelper")
    }

    /// Runs the helper to completion; returns its exit status and output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
