import Foundation

/// Runs the package's `DefaultsTestHelper` executable as a real child process.
struct ChildProcess {
    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    /// The helper binary, built beside the test bundle.
    static var helperURL: URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Apple platforms the tests run inside an .xctest bundle.
        while directory.pathExtension == "xctest" || directory.lastPathComponent == "MacOS"
            || directory.lastPathComponent == "Contents"
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("DefaultsTestHelper")
    }

    /// Starts the helper with `arguments` and returns the running process and its output pipe.
    static func start(
        _ arguments: [String],
        environment: [String: String] = [:]
    ) throws -> (process: Process, output: Pipe) {
        let process = Process()
        process.executableURL = helperURL
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

    /// Runs the helper to completion.
    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = helperURL
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self)
        )
    }
}
