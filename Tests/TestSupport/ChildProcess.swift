import Foundation
import Synchronization

/// A program run as a real child process by a test: spawned with `posix_spawn`, reaped with
/// `waitpid`, its standard output and error each read on a thread of its own.
///
/// Not Foundation's `Process`, whose `waitUntilExit()` was seen to miss a child's exit on Linux
/// and hang. Every wait has a deadline that only keeps a broken test from hanging: a child still
/// running at its deadline is killed, and the wait fails saying so. A child that is not waited
/// for is killed and reaped when the last reference to it goes.
///
/// ```swift
/// let result = try ChildProcess.run("/bin/echo", ["hello"])
/// #expect(result.termination == .exited(0) && result.output == "hello\n")
///
/// let server = try ChildProcess(helper, ["serve"], environment: ["XDG_CONFIG_HOME": path], input: .pipe)
/// try server.write("ping\n")
/// _ = try server.line { $0 == "pong" }
/// server.signal(SIGTERM)
/// #expect(try server.wait() == .exited(0))
/// ```
public final class ChildProcess: Sendable {
    /// What the child reads on its standard input.
    public enum Input: Sendable {
        /// The file at a path, opened for reading (`/dev/null`, `/dev/zero`, a FIFO…).
        case file(String)
        /// A pipe the test writes to with `write(_:)` and closes with `closeInput()`.
        case pipe
        /// These bytes, then the end of the input.
        case data(Data)

        /// Nothing: `/dev/null`.
        public static var null: Input { .file("/dev/null") }
    }

    /// One of the child's two output streams.
    public enum Stream: Sendable {
        case output
        case error
    }

    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        init(waitStatus status: Int32) {
            // The low 7 bits hold the signal that ended it, 0 when it exited; the exit status is
            // the next byte.
            let signal = status & 0x7f
            self = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        }

        public var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signaled(let signal): "ended by signal \(signal) (\(String(cString: strsignal(signal))))"
            }
        }
    }

    /// What a child that ran to its end did.
    public struct Result: Sendable, CustomStringConvertible {
        public var termination: Termination
        /// The standard output, as bytes.
        public var outputData: Data
        /// The standard error, as bytes.
        public var errorData: Data

        /// The exit status, or 128 plus the signal that ended it (as a shell reports it).
        public var status: Int32 {
            switch termination {
            case .exited(let status): status
            case .signaled(let signal): 128 + signal
            }
        }

        /// The standard output, decoded as UTF-8.
        public var output: String { String(decoding: outputData, as: UTF8.self) }
        /// The standard error, decoded as UTF-8.
        public var error: String { String(decoding: errorData, as: UTF8.self) }

        public var description: String {
            "\(termination), output \(output.debugDescription), error \(error.debugDescription)"
        }
    }

    /// A child that could not be started, did not end in time, or broke its pipes.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The process ID.
    public let id: pid_t
    /// The program and its arguments, for messages.
    public let commandLine: String

    private let reaped = Mutex<Termination?>(nil)
    private let input: Mutex<Int32?>
    private let standardOutput: OutputCollector
    private let standardError: OutputCollector

    /// Starts `executable` (a path) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: Variables set for the child on top of this process's environment.
    ///   - directory: The child's working directory; this process's when `nil`.
    ///   - input: What the child reads on its standard input.
    /// - Throws: ``Failure`` when the program cannot be started (a missing or non-executable
    ///   file, a missing directory), saying which and why.
    public init(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String] = [:],
        directory: String? = nil,
        input: Input = .null
    ) throws {
        let commandLine = ([executable] + arguments).joined(separator: " ")
        let spawned = try Spawn(
            executable: executable, arguments: arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            directory: directory, input: input, commandLine: commandLine)
        self.commandLine = commandLine
        id = spawned.id
        standardOutput = OutputCollector(reading: spawned.output)
        standardError = OutputCollector(reading: spawned.error)
        if case .data(let data) = input, let descriptor = spawned.input {
            // On a thread of its own: the child may not read all of it.
            self.input = Mutex(nil)
            Thread {
                _ = Self.write(data, to: descriptor)
                close(descriptor)
            }.start()
        } else {
            self.input = Mutex(spawned.input)
        }
    }

    /// Runs `executable` with `arguments` to its end and returns what it did.
    ///
    /// - Throws: ``Failure`` when it cannot be started, or has not ended (and closed its output)
    ///   after `timeout`; it is then killed.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String] = [:],
        directory: String? = nil,
        input: Data? = nil,
        timeout: Duration = defaultWaitTimeout,
        fileID: String = #fileID,
        line: Int = #line
    ) throws -> Result {
        let child = try ChildProcess(
            executable, arguments, environment: environment, directory: directory,
            input: input.map { .data($0) } ?? .null)
        return try child.finish(timeout: timeout, fileID: fileID, line: line)
    }

    deinit {
        if reaped.withLock({ $0 }) == nil {
            Foundation.kill(id, SIGKILL)
            var status: Int32 = 0
            while waitpid(id, &status, 0) == -1 && errno == EINTR {}
        }
        if let descriptor = input.withLock({ $0 }) { close(descriptor) }
    }

    // MARK: Input

    /// Writes `data` to the child's standard input (started with ``Input/pipe``).
    ///
    /// - Throws: ``Failure`` when the input is not a pipe, was closed, or the child closed it.
    public func write(_ data: Data) throws {
        try input.withLock { descriptor in
            guard let descriptor else { throw Failure(description: "\(commandLine): its input is not an open pipe") }
            if let error = Self.write(data, to: descriptor) {
                throw Failure(
                    description: "\(commandLine): writing to its input failed: \(String(cString: strerror(error)))")
            }
        }
    }

    /// Writes `text`, in UTF-8, to the child's standard input (started with ``Input/pipe``).
    public func write(_ text: String) throws {
        try write(Data(text.utf8))
    }

    /// Closes the child's standard input: it reads the end of its input.
    public func closeInput() {
        input.withLock { descriptor in
            if let open = descriptor { close(open) }
            descriptor = nil
        }
    }

    /// Writes all of `data`; the `errno` of a failed write, or `nil`. SIGPIPE is ignored in this
    /// process (see `Spawn`), so a child that closed its input gives EPIPE.
    private static func write(_ data: Data, to descriptor: Int32) -> Int32? {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
    }

    // MARK: Output

    private func collector(_ stream: Stream) -> OutputCollector {
        stream == .output ? standardOutput : standardError
    }

    /// The standard output so far, decoded as UTF-8.
    public var output: String { String(decoding: standardOutput.data, as: UTF8.self) }
    /// The standard error so far, decoded as UTF-8.
    public var error: String { String(decoding: standardError.data, as: UTF8.self) }

    /// The complete lines of `stream` so far, without their line feeds.
    public func lines(_ stream: Stream = .output) -> [String] {
        collector(stream).lines.lines
    }

    /// Waits until the complete lines of `stream` satisfy `condition`, and returns them.
    ///
    /// - Throws: ``Failure`` when the stream ends first, or `timeout` passes (the child is then
    ///   left running).
    @discardableResult
    public func waitForLines(
        _ stream: Stream = .output,
        timeout: Duration = defaultWaitTimeout,
        fileID: String = #fileID,
        line: Int = #line,
        until condition: ([String]) -> Bool
    ) throws -> [String] {
        do {
            return try poll("lines of its \(stream)", timeout: timeout, fileID: fileID, line: line) {
                try check(stream, condition)
            }
        } catch let timeout as WaitTimeout {
            throw stillRunning(after: timeout)
        }
    }

    /// Waits until the complete lines of `stream` satisfy `condition`, and returns them.
    @discardableResult
    public nonisolated(nonsending) func waitForLines(
        _ stream: Stream = .output,
        timeout: Duration = defaultWaitTimeout,
        fileID: String = #fileID,
        line: Int = #line,
        until condition: ([String]) -> Bool
    ) async throws -> [String] {
        do {
            return try await poll("lines of its \(stream)", timeout: timeout, fileID: fileID, line: line) {
                try check(stream, condition)
            }
        } catch let timeout as WaitTimeout {
            throw stillRunning(after: timeout)
        }
    }

    /// Waits for a complete line of `stream`, after its first `start` lines, that satisfies
    /// `predicate`, and returns it.
    ///
    /// - Throws: ``Failure`` when the stream ends first, or `timeout` passes (the child is then
    ///   left running).
    public func line(
        _ stream: Stream = .output,
        after start: Int = 0,
        timeout: Duration = defaultWaitTimeout,
        fileID: String = #fileID,
        line: Int = #line,
        where predicate: (String) -> Bool
    ) throws -> String {
        let lines = try waitForLines(stream, timeout: timeout, fileID: fileID, line: line) {
            $0.dropFirst(start).contains(where: predicate)
        }
        return try firstLine(of: lines, after: start, where: predicate)
    }

    /// Waits for a complete line of `stream`, after its first `start` lines, that satisfies
    /// `predicate`, and returns it.
    public nonisolated(nonsending) func line(
        _ stream: Stream = .output,
        after start: Int = 0,
        timeout: Duration = defaultWaitTimeout,
        fileID: String = #fileID,
        line: Int = #line,
        where predicate: (String) -> Bool
    ) async throws -> String {
        let lines = try await waitForLines(stream, timeout: timeout, fileID: fileID, line: line) {
            $0.dropFirst(start).contains(where: predicate)
        }
        return try firstLine(of: lines, after: start, where: predicate)
    }

    /// The line `line(…)` waited for, found in `lines`.
    private func firstLine(of lines: [String], after start: Int, where predicate: (String) -> Bool) throws -> String {
        guard let found = lines.dropFirst(start).first(where: predicate) else {
            throw Failure(description: "\(commandLine): the line awaited is not among \(lines)")
        }
        return found
    }

    /// The lines when they satisfy `condition`; `nil` while more may come; throws when none will.
    private func check(_ stream: Stream, _ condition: ([String]) -> Bool) throws -> [String]? {
        let (lines, isFinished) = collector(stream).lines
        if condition(lines) { return lines }
        if isFinished {
            throw Failure(description: "\(commandLine): its \(stream) ended without the lines awaited; \(summary)")
        }
        return nil
    }

    // MARK: Life

    /// Sends `signal` to the child, unless it has been reaped (so never to another process that
    /// took its ID).
    public func signal(_ signal: Int32) {
        reaped.withLock { termination in
            if termination == nil { _ = Foundation.kill(id, signal) }
        }
    }

    /// Ends the child at once (SIGKILL): nothing runs on its way out.
    public func kill() {
        signal(SIGKILL)
    }

    /// How the child ended, or `nil` while it runs. Reaps it once it has ended.
    public var termination: Termination? {
        try? reap()
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool { termination == nil }

    /// Reaps the child if it has ended, without waiting.
    private func reap() throws -> Termination? {
        try reaped.withLock { termination in
            if let termination { return termination }
            var status: Int32 = 0
            while true {
                let result = waitpid(id, &status, WNOHANG)
                if result == id {
                    termination = Termination(waitStatus: status)
                    return termination
                }
                if result == 0 { return nil }
                if errno != EINTR {
                    throw Failure(
                        description: "\(commandLine): waitpid failed: \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    /// Waits for the child to end and returns how it ended.
    ///
    /// - Throws: ``Failure`` when it has not ended after `timeout`; it is then killed.
    @discardableResult
    public func wait(
        timeout: Duration = defaultWaitTimeout, fileID: String = #fileID, line: Int = #line
    ) throws -> Termination {
        do {
            return try poll("its end", timeout: timeout, fileID: fileID, line: line) { try reap() }
        } catch let timeout as WaitTimeout {
            throw killed(after: timeout)
        }
    }

    /// Waits for the child to end and returns how it ended.
    ///
    /// - Throws: ``Failure`` when it has not ended after `timeout`; it is then killed.
    @discardableResult
    public nonisolated(nonsending) func wait(
        timeout: Duration = defaultWaitTimeout, fileID: String = #fileID, line: Int = #line
    ) async throws -> Termination {
        do {
            return try await poll("its end", timeout: timeout, fileID: fileID, line: line) { try reap() }
        } catch let timeout as WaitTimeout {
            throw killed(after: timeout)
        }
    }

    /// Waits for the child to end and its output to close, and returns what it did.
    ///
    /// - Throws: ``Failure`` when that has not happened after `timeout`; it is then killed.
    public func finish(
        timeout: Duration = defaultWaitTimeout, fileID: String = #fileID, line: Int = #line
    ) throws -> Result {
        do {
            return try poll("its end and the end of its output", timeout: timeout, fileID: fileID, line: line) {
                try finished()
            }
        } catch let timeout as WaitTimeout {
            throw killed(after: timeout)
        }
    }

    /// Waits for the child to end and its output to close, and returns what it did.
    ///
    /// - Throws: ``Failure`` when that has not happened after `timeout`; it is then killed.
    public nonisolated(nonsending) func finish(
        timeout: Duration = defaultWaitTimeout, fileID: String = #fileID, line: Int = #line
    ) async throws -> Result {
        do {
            return try await poll("its end and the end of its output", timeout: timeout, fileID: fileID, line: line) {
                try finished()
            }
        } catch let timeout as WaitTimeout {
            throw killed(after: timeout)
        }
    }

    /// The result once the child has ended and both outputs are closed.
    private func finished() throws -> Result? {
        guard let termination = try reap(), standardOutput.isFinished, standardError.isFinished else { return nil }
        return Result(termination: termination, outputData: standardOutput.data, errorData: standardError.data)
    }

    // MARK: Failures

    /// The end of what the child printed, for a failure's message.
    private var summary: String {
        "output \(String(output.suffix(2000)).debugDescription), error \(String(error.suffix(2000)).debugDescription)"
    }

    /// Says that a wait for the output of a child still running timed out.
    private func stillRunning(after timeout: WaitTimeout) -> Failure {
        Failure(description: "\(commandLine): \(timeout); it is still running; \(summary)")
    }

    /// Kills the child after a wait timed out, and says so.
    private func killed(after timeout: WaitTimeout) -> Failure {
        let wasRunning = isRunning
        kill()
        return Failure(
            description: "\(commandLine): \(timeout); "
                + (wasRunning ? "it was still running and is killed" : "it ended, but its output was still open")
                + "; \(summary)")
    }
}
