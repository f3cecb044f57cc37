import Defaults
import DefaultsPropertyList
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds, reads and changes domains in the suites' directory.
///
/// Reading never changes anything: the file is read and decoded here, without opening a suite, so
/// that a damaged file is reported and left exactly where it is (a ``FileSuite`` moves such a
/// file aside when it opens it). Changing opens a ``FileSuite`` on the file, which takes the
/// suite's lock, merges with what other processes wrote, and tells running applications.
struct DomainStore {
    /// Where named domains live: `$XDG_CONFIG_HOME` or `~/.config`, as Foundation on Linux.
    var directory: URL = FileSuite.defaultDirectory

    // MARK: Listing

    /// The names of the domains in the directory, sorted: every `<name>.plist` but hidden files
    /// (the global domain, locks, temporary files) and domains with no keys.
    func domainNames() -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return
            entries
            .filter { $0.hasSuffix(".plist") && !$0.hasPrefix(".") }
            .map { String($0.dropLast(".plist".count)) }
            // Foundation writes `UserDefaults(suiteName: "NSGlobalDomain")` there, but no
            // application reads it as the global domain; `NSGlobalDomain` names the real one.
            .filter { $0 != Domain.globalDomainName }
            .filter { name in
                // A damaged file is listed: it is there, and `read` tells what is wrong with it.
                guard case .success(let values) = readResult(.named(name)) else { return true }
                return values.map { !$0.isEmpty } ?? false
            }
            .sorted()
    }

    /// Every domain with its values, the global domain first when it has any, then by name;
    /// domains that could not be read are returned as failures.
    func allDomains() -> [(domain: Domain, result: Result<[String: Any], CommandFailure>)] {
        let domains = [Domain.global] + domainNames().map(Domain.named)
        return domains.compactMap { domain in
            switch readResult(domain) {
            case .success(let values):
                guard let values, !values.isEmpty else { return nil }
                return (domain, .success(values))
            case .failure(let problem):
                return (domain, .failure(problem.failure))
            }
        }
    }

    // MARK: Reading

    /// The values of `domain`, or `nil` when it does not exist (no file, or a named domain with
    /// no keys).
    ///
    /// - Throws: ``CommandFailure`` when the file exists but cannot be read or is not a
    ///   property-list dictionary; the file is left untouched.
    func read(_ domain: Domain) throws(CommandFailure) -> [String: Any]? {
        let values: [String: Any]?
        switch readResult(domain) {
        case .success(let read): values = read
        case .failure(let problem): throw problem.failure
        }
        if let values, values.isEmpty, domain.isAbsentWhenEmpty {
            return nil
        }
        return values
    }

    /// The values of `domain`, failing with macOS's message when it does not exist.
    func readExisting(_ domain: Domain) throws(CommandFailure) -> [String: Any] {
        guard let values = try read(domain) else { throw .domainDoesNotExist(domain) }
        return values
    }

    /// Whether `domain` exists: it has keys, or its file is there but damaged.
    ///
    /// - Throws: ``CommandFailure`` when the file cannot be read at all.
    func exists(_ domain: Domain) throws(CommandFailure) -> Bool {
        switch readResult(domain) {
        case .success(let values):
            guard let values else { return false }
            return !values.isEmpty || !domain.isAbsentWhenEmpty
        case .failure(let problem):
            guard problem.isDamaged else { throw problem.failure }
            return true
        }
    }

    /// How often a file that does not decode is read again before it is judged damaged: a
    /// Foundation writer rewrites the file in place, so a reader can catch it half-written.
    private static let readAttempts = 4

    /// Why a domain's file could not be read.
    struct ReadProblem: Error {
        var failure: CommandFailure
        /// The file was read but is not a property-list dictionary (as opposed to a file that
        /// could not be read at all, or a directory).
        var isDamaged: Bool
    }

    private func readResult(_ domain: Domain) -> Result<[String: Any]?, ReadProblem> {
        let path = domain.fileURL(in: directory).path
        var previous: Data?
        var attempt = 0
        while true {
            attempt += 1
            let data: Data
            switch Self.readFile(path) {
            case .absent:
                return .success(nil)
            case .failure(let reason):
                return .failure(
                    ReadProblem(
                        failure: CommandFailure("Could not read domain \(domain.displayName): \(reason)"),
                        isDamaged: false)
                )
            case .data(let read):
                data = read
            }
            switch Self.decodeDictionary(data) {
            case .success(let values):
                return .success(values)
            case .failure(let reason):
                if attempt < Self.readAttempts, data != previous {
                    previous = data
                    usleep(20_000)
                    continue
                }
                let message =
                    "Could not read domain \(domain.displayName): \(path) is not a valid property list (\(reason)); it was left unchanged"
                return .failure(ReadProblem(failure: CommandFailure(message), isDamaged: true))
            }
        }
    }

    private enum FileRead {
        case absent
        case data(Data)
        case failure(String)
    }

    private static func readFile(_ path: String) -> FileRead {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .absent }
        if isDirectory.boolValue {
            return .failure("\(path) is a directory, not a property-list file")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return .absent }
            return .failure("\(path) could not be opened: \(String(cString: strerror(code)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            return .data(try handle.readToEnd() ?? Data())
        } catch {
            return .failure("\(path) could not be read: \(error.localizedDescription)")
        }
    }

    /// Decodes a domain file: a property list (XML, binary or old-style text) holding a dictionary.
    static func decodeDictionary(_ data: Data) -> Result<[String: Any], DecodingProblem> {
        guard !data.isEmpty else { return .failure(DecodingProblem(reason: "the file is empty")) }
        let object: Any
        do {
            object = try PropertyList.decode(data)
        } catch {
            return .failure(DecodingProblem(reason: error.description))
        }
        guard let values = PlistValue.dictionary(object) else {
            return .failure(
                DecodingProblem(reason: "its top level is \(PlistValue.typeName(object)), not a dictionary"))
        }
        return .success(values)
    }

    /// Why a file's bytes are not a domain.
    struct DecodingProblem: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    // MARK: Changing

    /// Changes `domain`: checks that its file can be read, opens a suite on it, lets `edit` look at
    /// the current values and say what to change, then writes and flushes. When anything fails,
    /// nothing is written.
    ///
    /// The suite is opened without launch arguments (the command's own arguments are not
    /// settings) and with a coalescing delay far longer than the command runs, so that the only
    /// write is the `flush()` here, which takes the suite's lock, merges with the file as other
    /// processes left it, and writes atomically.
    ///
    /// - Parameter replacingDamaged: For commands that replace the whole domain (`import`,
    ///   `write domain '{…}'`, `delete domain`): a file that is not a property list does not stop
    ///   them; the suite moves it aside to a `.corrupt-<time>` backup, which is reported on
    ///   standard error. Otherwise such a file fails the command and is left where it is.
    func change(
        _ domain: Domain, replacingDamaged: Bool = false,
        _ edit: (inout DomainEdit) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        switch readResult(domain) {
        case .success: break
        case .failure(let problem):
            // Damaged or unreadable files are reported, not moved aside by the suite.
            guard replacingDamaged, problem.isDamaged else { throw problem.failure }
        }
        let suite = openSuite(domain)
        for problem in suite.problems {
            guard replacingDamaged, let backupURL = problem.backupURL else {
                throw CommandFailure("Could not read domain \(domain.displayName): \(problem.message)")
            }
            Output.printError("The damaged file \(suite.fileURL.path) was moved to \(backupURL.path)")
        }
        let problemCount = suite.problems.count
        var values: [String: Any] = [:]
        for (key, value) in suite.persistentValues() {
            values[key] = PlistValue.normalized(value)
        }
        var changes = DomainEdit(values: values)
        try edit(&changes)
        for operation in changes.operations {
            switch operation {
            case .set(let key, let value): suite.set(value, forKey: key)
            case .remove(let key): suite.set(nil, forKey: key)
            case .removeAll: suite.removeAll()
            }
        }
        if let problem = suite.problems.dropFirst(problemCount).first {
            throw CommandFailure("Could not write domain \(domain.displayName): \(problem.message)")
        }
        do {
            try suite.flush()
        } catch {
            throw CommandFailure(
                "Could not write domain \(domain.displayName): \((error as? SuiteError)?.message ?? "\(error)")"
            )
        }
    }

    /// A suite on `domain`'s file, without launch arguments.
    func openSuite(_ domain: Domain, coalescingDelay: Duration = .seconds(24 * 60 * 60)) -> FileSuite {
        FileSuite(
            fileURL: domain.fileURL(in: directory), name: domain.suiteName, arguments: [],
            coalescingDelay: coalescingDelay
        )
    }
}

/// The changes a command makes to a domain, collected before any is made.
struct DomainEdit {
    enum Operation {
        case set(String, Any)
        case remove(String)
        case removeAll
    }

    /// The domain's values, with the changes so far made.
    private(set) var values: [String: Any]
    private(set) var operations: [Operation] = []

    init(values: [String: Any]) {
        self.values = values
    }

    mutating func set(_ value: Any, forKey key: String) {
        values[key] = value
        operations.append(.set(key, value))
    }

    mutating func remove(_ key: String) {
        values[key] = nil
        operations.append(.remove(key))
    }

    /// Replaces every value of the domain with `newValues`.
    mutating func replaceAll(with newValues: [String: Any]) {
        values = [:]
        operations.append(.removeAll)
        for (key, value) in newValues.sorted(by: { $0.key < $1.key }) {
            set(value, forKey: key)
        }
    }
}
