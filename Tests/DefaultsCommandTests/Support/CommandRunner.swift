import DefaultsPropertyList
import Foundation
import Synchronization

/// A fresh directory of domains for one test (its `XDG_CONFIG_HOME`), removed when the test ends,
/// and the `defaults` executable run as a child process on it.
final class CommandSandbox {
    let directory: URL
    var path: String { directory.path }

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swift-defaults-command-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The `defaults` executable, built beside the test binary.
    static var executableURL: URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Apple platforms the tests run inside an .xctest bundle.
        while directory.pathExtension == "xctest" || directory.lastPathComponent == "MacOS"
            || directory.lastPathComponent == "Contents"
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent("defaults")
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = path
        environment["TZ"] = "UTC"
        return environment
    }

    struct Result: CustomStringConvertible {
        var status: Int32
        var output: String
        var error: String
        var outputData: Data

        var description: String {
            "status \(status), output \(output.debugDescription), error \(error.debugDescription)"
        }
    }

    /// Runs `defaults arguments…` to completion, with `input` on its standard input.
    @discardableResult
    func run(_ arguments: String..., input: Data? = nil) throws -> Result {
        try run(arguments, input: input)
    }

    @discardableResult
    func run(_ arguments: [String], input: Data? = nil) throws -> Result {
        let process = Process()
        process.executableURL = Self.executableURL
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        let error = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = standardInput
        try process.run()
        if let input {
            standardInput.fileHandleForWriting.write(input)
        }
        try standardInput.fileHandleForWriting.close()
        // Both pipes are drained at once, so that a full one cannot block the child.
        let errorReader = PipeCollector(error.fileHandleForReading)
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errorReader.finish()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self),
            outputData: outputData
        )
    }

    /// Starts `defaults arguments…` and returns it running, its output collected line by line.
    func start(_ arguments: [String]) throws -> RunningCommand {
        let process = Process()
        process.executableURL = Self.executableURL
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return RunningCommand(
            process: process,
            output: PipeCollector(output.fileHandleForReading),
            error: PipeCollector(error.fileHandleForReading)
        )
    }

    // MARK: Files

    func fileURL(_ domain: String) -> URL {
        directory.appendingPathComponent(domain + ".plist")
    }

    /// The bytes of `domain`'s file, or `nil` when it does not exist.
    func bytes(_ domain: String) -> Data? {
        FileManager.default.contents(atPath: fileURL(domain).path)
    }

    /// The file's dictionary, decoded independently of the command.
    func storedValues(_ domain: String) throws -> [String: Any] {
        let data = try Data(contentsOf: fileURL(domain))
        guard let values = try PropertyList.decode(data) as? [String: Any] else {
            throw CommandTestFailure("\(fileURL(domain).path) is not a dictionary")
        }
        return values
    }

    /// Writes `values` as `domain`'s file, as another program would.
    func store(_ values: [String: Any], as domain: String) throws {
        try PropertyList.encodeXML(values).write(to: fileURL(domain))
    }

    /// The names in the directory, sorted.
    func fileNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }
}

struct CommandTestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A command left running (`watch`).
struct RunningCommand {
    let process: Process
    let output: PipeCollector
    let error: PipeCollector

    /// Sends `signal` and waits for the process to end; returns its status.
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        _ = output.finish()
        _ = error.finish()
        return process.terminationStatus
    }
}

/// Reads a pipe to its end on a thread of its own, so tests can wait for lines as they come.
final class PipeCollector: Sendable {
    private final class Storage: Sendable {
        let data = Mutex(Data())
        let isFinished = Mutex(false)
    }

    private let storage = Storage()

    init(_ handle: FileHandle) {
        let thread = Thread { [storage] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                storage.data.withLock { $0.append(chunk) }
            }
            storage.isFinished.withLock { $0 = true }
        }
        thread.start()
    }

    var text: String {
        String(decoding: storage.data.withLock { $0 }, as: UTF8.self)
    }

    /// The complete lines so far.
    var lines: [String] {
        var lines = text.components(separatedBy: "\n")
        lines.removeLast()
        return lines
    }

    /// Waits until `condition` holds for the complete lines so far. The timeout only keeps a
    /// broken test from hanging; nothing is measured.
    func waitForLines(timeout: Duration = .seconds(30), until condition: ([String]) -> Bool) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !condition(lines) {
            if ContinuousClock.now > deadline { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return true
    }

    /// Waits for the end of the pipe and returns everything read.
    func finish(timeout: Duration = .seconds(30)) -> Data {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !storage.isFinished.withLock({ $0 }), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        return storage.data.withLock { $0 }
    }
}
