import TestSupport

/// The package's `DefaultsTestHelper` (Tests/Helper), run as a real child process: its first
/// argument names what it does.
enum TestHelper {
    static let path = builtExecutable("DefaultsTestHelper")

    /// Starts the helper and returns it running.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(path, arguments, environment: environment)
    }

    /// Runs the helper to its end.
    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess.Result {
        try ChildProcess.run(path, arguments, environment: environment)
    }
}
