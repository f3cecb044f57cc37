import Defaults
import DefaultsFiles
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
/// Reading never changes anything: the file is read and decoded with the file layer ``FileSuite``
/// stands on (`SuiteFile`), without opening a suite, so that a damaged file is reported and left
/// exactly where it is (a ``FileSuite`` moves such a file aside when it opens it). Changing is the
/// file layer's locked edit of the file: the values as other processes left them, changed and
/// written holding the suite's lock; running applications see it as another process's change.
package struct DomainStore {
    /// Where named domains live: `$XDG_CONFIG_HOME` or `~/.config`, as Foundation on Linux.
    package var directory: URL = FileSuite.defaultDirectory

    package init(directory: URL = FileSuite.defaultDirectory) {
        self.directory = directory
    }

    // MARK: Listing

    /// The names of the domains in the directory, sorted: every `<name>.plist` but hidden files
    /// (the global domain, locks, temporary files) and domains with no keys.
    package func domainNames() -> [String] {
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
    package func allDomains() -> [(domain: Domain, result: Result<[String: PropertyListValue], CommandFailure>)] {
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
    package func read(_ domain: Domain) throws(CommandFailure) -> [String: PropertyListValue]? {
        let values: [String: PropertyListValue]?
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
    package func readExisting(_ domain: Domain) throws(CommandFailure) -> [String: PropertyListValue] {
        guard let values = try read(domain) else { throw .domainDoesNotExist(domain) }
        return values
    }

    /// Whether `domain` exists: it has keys, or its file is there but damaged.
    ///
    /// - Throws: ``CommandFailure`` when the file cannot be read at all.
    package func exists(_ domain: Domain) throws(CommandFailure) -> Bool {
        switch readResult(domain) {
        case .success(let values):
            guard let values else { return false }
            return !values.isEmpty || !domain.isAbsentWhenEmpty
        case .failure(let problem):
            guard problem.isDamaged else { throw problem.failure }
            return true
        }
    }

    /// Why a domain's file could not be read.
    package struct ReadProblem: Error {
        package var failure: CommandFailure
        /// The file was read but is not a property-list dictionary (as opposed to a file that
        /// could not be read at all, or a directory).
        package var isDamaged: Bool
    }

    /// Reads `domain` through the file layer ``FileSuite`` stands on (the same bounds, retries and
    /// judgement of damage), changing nothing.
    private func readResult(_ domain: Domain) -> Result<[String: PropertyListValue]?, ReadProblem> {
        let file = SuiteFile(url: domain.fileURL(in: directory))
        func failure(_ message: String, isDamaged: Bool = false) -> Result<[String: PropertyListValue]?, ReadProblem> {
            .failure(
                ReadProblem(
                    failure: CommandFailure("Could not read domain \(domain.displayName): \(message)"),
                    isDamaged: isDamaged))
        }
        switch file.read() {
        case .values(let values, _):
            return .success(values)
        case .absent:
            return .success(nil)
        case .notRegularFile(_, let kind):
            return failure("\(file.path) is \(kind), not a property-list file")
        case .unreadable(let reason):
            return failure("\(file.path) could not be read: \(reason)")
        case .damaged(_, let reason):
            return failure(
                "\(file.path) is not a valid property list (\(reason)); it was left unchanged", isDamaged: true)
        }
    }

    /// Decodes a property list given to `import`: a dictionary, as a domain file holds. Unlike a
    /// domain file, empty input is refused, so that an empty pipe does not wipe a domain.
    package static func decodeDictionary(_ data: Data) -> Result<[String: PropertyListValue], SuiteFile.DecodingProblem>
    {
        guard !data.isEmpty else { return .failure(SuiteFile.DecodingProblem(description: "the input is empty")) }
        return SuiteFile.decode(data)
    }

    // MARK: Changing

    /// Changes `domain` with the file layer's one locked edit (``SuiteFile/edit(replacingDamaged:_:)``):
    /// holding the file's lock from the read to the write, `edit` looks at the current values (as
    /// other processes left them) and says what to change; the changes are applied beneath the
    /// administrator's layers by the library's one function, as a program's write would be, and
    /// the values it leaves are written, durably, before the lock is released. Running
    /// applications see the new file as any other process's change. When anything fails, nothing
    /// is written.
    ///
    /// - Parameter replacingDamaged: For commands that replace the whole domain (`import`,
    ///   `write domain '{…}'`): a file that is not a property list does not stop them; it is
    ///   moved aside to a `.corrupt-<time>` backup, which is reported on standard error.
    ///   Otherwise such a file fails the command and is left where it is.
    /// - Throws: ``CommandFailure``, also when the edit writes a key the administrator enforces:
    ///   the whole edit is refused (``SuiteEdit/ManagedKeys/refuseWholeEdit``), naming the
    ///   managed file.
    package func change(
        _ domain: Domain, replacingDamaged: Bool = false,
        _ edit: (inout DomainEdit) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        // A schema that cannot be read counts as none here; the commands that check values
        // against it say so.
        let schema = (try? SchemaCatalog.schema(of: domain))?.schema
        let layers = DomainAdministration.resolution(of: domain, schema: schema)
        func applied(to values: [String: PropertyListValue]) throws(CommandFailure) -> [String: PropertyListValue] {
            var changes = DomainEdit(values: values)
            try edit(&changes)
            let applied = layers.applying(changes.edits, to: values, managedKeys: .refuseWholeEdit)
            guard applied.managed.isEmpty else {
                throw DomainAdministration.refusal(
                    writing: applied.managed, of: domain, in: layers, editedKeyCount: changes.editedKeyCount)
            }
            return applied.user
        }
        // Tried first without the lock (whose file it would leave behind): a file or an edit that
        // stops the change is reported and the directory left exactly as it was.
        switch readResult(domain) {
        case .success(let values):
            _ = try applied(to: values ?? [:])
        case .failure(let problem):
            guard replacingDamaged && problem.isDamaged else { throw problem.failure }
            _ = try applied(to: [:])
        }
        let file = SuiteFile(url: domain.fileURL(in: directory))
        var failure: CommandFailure?
        let done: SuiteFile.Edit
        do {
            done = try file.edit(replacingDamaged: replacingDamaged) { values in
                do throws(CommandFailure) {
                    values = try applied(to: values)
                } catch {
                    failure = error
                    throw error
                }
            }
        } catch {
            if let failure {
                throw failure
            }
            let verb = error is SuiteFile.TooLargeToReadBack || error is SystemCallError ? "write" : "read"
            throw CommandFailure("Could not \(verb) domain \(domain.displayName): \(error)")
        }
        if let backupPath = done.backupPath {
            Output.printError("The damaged file \(file.path) was moved to \(backupPath)")
        }
    }

    /// Removes `domain` (`defaults delete domain`): its file and lock file, leaving nothing behind
    /// (for a link, the file it points to is emptied and the link kept). A damaged file is first
    /// moved aside to a backup, reported on standard error.
    package func remove(_ domain: Domain) throws(CommandFailure) {
        let file = SuiteFile(url: domain.fileURL(in: directory))
        do {
            switch file.readMovingDamagedAside(holdingLock: false) {
            case .values, .absent(nil): break
            case .absent(let (backupPath, _)?):
                Output.printError("The damaged file \(file.path) was moved to \(backupPath)")
            case .blocked(_, let blockage):
                throw CommandFailure("Could not delete domain \(domain.displayName): \(file.describe(blockage))")
            }
            try file.remove()
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("Could not delete domain \(domain.displayName): \(error)")
        }
    }

    /// A suite on `domain`'s file that `watch` observes: without launch arguments (the command's
    /// own arguments are not settings) and, for a named domain, with the administrator's layers.
    package func watchedSuite(_ domain: Domain) -> FileSuite {
        if case .named(let name) = domain {
            return FileSuite(name: name, directory: directory, arguments: [])
        }
        return FileSuite(fileURL: domain.fileURL(in: directory), name: domain.suiteName, arguments: [])
    }
}

/// The changes a command makes to a domain: what it asks of the library's one function that
/// changes a suite's domains (``SuiteEdit``), with the values as they would then be, for the
/// command to look at as it goes.
package struct DomainEdit {
    /// The domain's values, with the changes so far made.
    package private(set) var values: [String: PropertyListValue]
    /// The changes so far, in order.
    package private(set) var edits: [SuiteEdit] = []
    /// How many keys the changes name (a replacement names every key it writes).
    package private(set) var editedKeyCount = 0

    package init(values: [String: PropertyListValue]) {
        self.values = values
    }

    package mutating func set(_ value: PropertyListValue, forKey key: String) {
        write(value, forKey: key)
    }

    package mutating func remove(_ key: String) {
        write(nil, forKey: key)
    }

    private mutating func write(_ value: PropertyListValue?, forKey key: String) {
        values[key] = value
        editedKeyCount += 1
        // Consecutive writes are one edit, as a program's `setValues`.
        if case .setValues(var writes)? = edits.last {
            writes.append((key, value))
            edits[edits.count - 1] = .setValues(writes)
        } else {
            edits.append(.setValues([(key, value)]))
        }
    }

    /// Replaces every value of the domain with `newValues`: the library's `removeAll`, then its
    /// `setValues`, so that a value the user's file held under a key the administrator enforces
    /// may go, and no value may be written under one.
    package mutating func replaceAll(with newValues: [String: PropertyListValue]) {
        values = newValues
        editedKeyCount = newValues.count
        edits = [.removeAll, .setValues(newValues.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })]
    }

    /// Moves the value of `formerName` to `key`, where `key` holds none: a migration's move,
    /// which the administrator's rule does not stop (a program's migration moves the user's
    /// value beneath what is enforced, too).
    package mutating func move(_ formerName: String, to key: String) {
        guard let value = values[formerName], values[key] == nil else { return }
        values[formerName] = nil
        values[key] = value
        editedKeyCount += 2
        edits.append(.migrated([KeyMove(renaming: formerName, to: key, value: value)]))
    }
}
