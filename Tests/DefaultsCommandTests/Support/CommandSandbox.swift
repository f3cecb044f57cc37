import DefaultsPropertyList
import Foundation
import TestSupport

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
    static var executable: String { builtExecutable("defaults") }

    /// What the command's environment has on top of this process's: this directory as its
    /// `XDG_CONFIG_HOME`, schemas only under it (``dataHome`` and ``systemData``, never the
    /// user's own), and UTC for the dates it prints.
    var environment: [String: String] {
        ["XDG_CONFIG_HOME": path, "XDG_DATA_HOME": dataHome.path, "XDG_DATA_DIRS": systemData.path, "TZ": "UTC"]
    }

    /// The `XDG_DATA_HOME` of the command and of the programs a test starts: where a program
    /// exports its schema (`defaults/schemas/<domain>.json`).
    var dataHome: URL { directory.appendingPathComponent("data", isDirectory: true) }

    /// The one directory of `XDG_DATA_DIRS`: where a package would install schemas.
    var systemData: URL { directory.appendingPathComponent("system-data", isDirectory: true) }

    /// Runs `defaults arguments…` to completion, with `input` on its standard input.
    @discardableResult
    func run(_ arguments: String..., input: Data? = nil) throws -> ChildProcess.Result {
        try run(arguments, input: input)
    }

    /// Runs `defaults arguments…` to completion, with `input` on its standard input and
    /// `environment` added to the sandbox's.
    @discardableResult
    func run(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:]) throws
        -> ChildProcess.Result
    {
        try ChildProcess.run(
            Self.executable, arguments, environment: self.environment.merging(environment) { _, new in new },
            input: input)
    }

    /// Starts `defaults arguments…` with `environment` added to the sandbox's, and returns it
    /// running.
    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(
            Self.executable, arguments, environment: self.environment.merging(environment) { _, new in new })
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
