import DefaultsFiles
import DefaultsPropertyList
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension FileSuite {
    /// Where the value a read returns comes from.
    public enum ValueSource: Sendable, Hashable, CustomStringConvertible {
        /// Enforced by the administrator, in `<dir>/managed/<suite>.plist`: wins over everything.
        case managed(URL)
        /// A launch argument (`-key value`).
        case argument
        /// The user's own file, the suite's ``FileSuite/fileURL``.
        case user(URL)
        /// The vendor's or administrator's default, in `<dir>/<suite>.plist`.
        case vendor(URL)
        /// The default declared in code (a key's default value, or ``FileSuite/register(defaults:)``).
        case codeDefault

        /// `managed`, `argument`, `user`, `vendor` or `code default`, then the file, if any.
        public var description: String {
            switch self {
            case .managed(let url): "managed \(url.path)"
            case .argument: "argument"
            case .user(let url): "user \(url.path)"
            case .vendor(let url): "vendor \(url.path)"
            case .codeDefault: "code default"
            }
        }
    }

    /// The administrator's directories, from `XDG_CONFIG_DIRS` (`/etc/xdg` when it is unset or
    /// empty), the first listed winning. Relative entries are ignored, as the XDG specification says.
    public static var defaultAdministratorDirectories: [URL] {
        let listed = (EnvironmentVariable.value("XDG_CONFIG_DIRS") ?? "")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return (listed.isEmpty ? ["/etc/xdg"] : listed).map { URL(fileURLWithPath: $0, isDirectory: true) }
    }

    /// The directories whose `<suite>.plist` and `managed/<suite>.plist` this suite reads.
    public var administratorDirectories: [URL] {
        administrator.directories
    }

    /// Whether the administrator enforces `key`'s value: a write of it through the library changes
    /// nothing, and is reported through ``problems``, ``onProblem`` and ``Defaults/logger``.
    public func isManaged(_ key: String) -> Bool {
        store.read { $0.domains.managed[key] != nil }
    }

    /// Whether `key` can be changed now, and if not, which administrator's file enforces it: a
    /// managed value of the key's name that no key declared in this process reads enforces nothing.
    public func writability(ofKey key: String) -> DefaultsWritability {
        administrator.writability(ofKey: key)
    }

    /// Where the value a read of `key` returns comes from; `nil` when no domain has one.
    public func valueSource(forKey key: String) -> ValueSource? {
        let source = store.read { $0.domains.source(forKey: key) }
        switch source {
        case .managed: return administrator.file(forKey: key, managed: true).map(ValueSource.managed)
        case .argument: return .argument
        case .persistent: return .user(fileURL)
        case .vendor: return administrator.file(forKey: key, managed: false).map(ValueSource.vendor)
        case .registered: return .codeDefault
        case nil: return nil
        }
    }

    /// The values of the administrator's files as they are now: the vendor defaults and the
    /// enforced (managed) values, each merged over the directories, the first listed winning.
    /// (For `DefaultsProvider`, whose snapshot holds every value a read of the suite can see.)
    package func administratorValues() -> (
        vendor: [String: PropertyListValue], managed: [String: PropertyListValue]
    ) {
        store.read { ($0.domains.vendor, $0.domains.managed) }
    }

    /// Watches the administrator's directories, so that a change to their files reaches the suite's
    /// observers like any other change. A directory created after the suite opened is not watched.
    func startWatchingAdministratorLayers() {
        administrator.startWatching { [weak self] in self?.reloadAdministratorLayers() }
    }

    /// Reads the administrator's files again and posts the keys whose values changed.
    func reloadAdministratorLayers() {
        let loaded = administrator.load()
        for problem in loaded.problems {
            report(problem)
        }
        applyAdministratorLayers()
    }

    /// Resolves the administrator's values last read with the keys declared in this process and
    /// puts what a read sees into the domains: a value no key of its name can read
    /// (``DeclaredKeyRule``) is left out, reported once
    /// naming its file, and a read goes on to the next layer, as if the file did not hold it.
    /// Posts the keys whose value or writability changed.
    func applyAdministratorLayers() {
        store.holdingLocks { held in
            let (_, ignored) = administrator.resolve(
                unreadable: { [unowned self] name, value in
                    DeclaredKeyRule.whyUnreadable(value, named: name, in: self)
                },
                apply: { resolution in
                    editHoldingLocks(
                        .administrator(vendor: resolution.vendorValues, managed: resolution.managedValues),
                        into: &held)
                }
            )
            for problem in ignored {
                held.report(problem)
            }
        }
    }
}

extension FileSuite {
    /// Told by ``Defaults/KeyRegistry`` of each key declared for the suite: a key declared after
    /// the administrator's files were read may not read a value they hold, so they are checked
    /// again, only when they hold its name.
    package func keyWasDeclared(_ name: String) {
        guard administrator.holds(name) else { return }
        guard !isSynchronizingOnThisThread else {
            // Inside `modify` (`io` and the file lock held): changes are posted with no lock held.
            DispatchQueue.global(qos: .userInitiated).async { [weak self] in self?.applyAdministratorLayers() }
            return
        }
        applyAdministratorLayers()
    }
}

/// The administrator's files of one suite: vendor defaults (`<dir>/<suite>.plist`) and enforced
/// values (`<dir>/managed/<suite>.plist`) in each directory, the first directory winning.
final class AdministratorLayers: Sendable {
    /// One file read, with its values.
    struct File: Sendable {
        let url: URL
        let values: [String: PropertyListValue]
    }

    struct Loaded: Sendable {
        /// The vendor files and the managed files read, the first listed directory's first.
        var vendorFiles: [File] = []
        var managedFiles: [File] = []
        var problems: [DefaultsError] = []
    }

    /// An administrator's value left out because no key of its name reads it, reported once.
    private struct IgnoredValue: Hashable {
        let key: String
        let file: URL
        let value: PropertyListValue
    }

    private struct State {
        var loaded = Loaded()
        /// The resolution whose values are in the suite's domains: where each came from, and
        /// whether the key can be written.
        var resolution = AdministratorResolution()
        var ignored: Set<IgnoredValue> = []
    }

    let directories: [URL]
    let suiteName: String
    /// Serializes loads and their application to the suite; keeps the files last read and the
    /// resolution applied. Taken before the suite store's lock, never inside it; its holder never
    /// waits for the suite's writer, `io` or file lock.
    private let current = Mutex(State())
    private let watchers = Mutex<[FileWatcher]>([])
    /// Where the watchers of the administrator's directories call back, one at a time.
    private let watcherQueue = DispatchQueue(label: "swift-defaults administrator files watcher")

    init(directories: [URL], suiteName: String) {
        self.directories = directories
        self.suiteName = suiteName
    }

    deinit {
        watchers.withLock { watchers in
            for watcher in watchers { watcher.stop() }
        }
    }

    var fileName: String { suiteName + ".plist" }

    /// The file the current value of `key` came from.
    func file(forKey key: String, managed: Bool) -> URL? {
        current.withLock { managed ? $0.resolution.managedFile(forKey: key) : $0.resolution.vendorFile(forKey: key) }
    }

    /// Whether `key` can be written, by the resolution in the suite's domains.
    func writability(ofKey key: String) -> DefaultsWritability {
        current.withLock { $0.resolution.writability(ofKey: key) }
    }

    /// The resolution in the suite's domains.
    var resolution: AdministratorResolution {
        current.withLock { $0.resolution }
    }

    /// Whether a file read last holds `key`, as a default or enforced.
    func holds(_ key: String) -> Bool {
        current.withLock { state in
            state.loaded.managedFiles.contains { $0.values[key] != nil }
                || state.loaded.vendorFiles.contains { $0.values[key] != nil }
        }
    }

    /// Resolves the files read last (``AdministratorResolution``), `unreadable` telling why the
    /// key of a name does not read a value, and calls `apply` with the resolution, holding the
    /// lock so that two applications cannot cross; keeps it as the one in the suite's domains,
    /// and returns `apply`'s result and a problem for each value newly ignored.
    func resolve<Result>(
        unreadable: (_ key: String, _ value: PropertyListValue) -> String?,
        apply: (AdministratorResolution) -> Result
    ) -> (Result, [DefaultsError]) {
        current.withLock { state in
            let resolution = AdministratorResolution(state.loaded, unreadable: unreadable)
            var ignored: Set<IgnoredValue> = []
            var problems: [DefaultsError] = []
            for entry in resolution.ignored {
                let value = IgnoredValue(key: entry.key, file: entry.file, value: entry.value)
                ignored.insert(value)
                if !state.ignored.contains(value) {
                    problems.append(
                        DefaultsError(
                            suite: suiteName, kind: .wrongType, key: entry.key, fileURL: entry.file,
                            message: AdministratorResolution.ignoredMessage(
                                key: entry.key, isManaged: entry.isManaged, file: entry.file,
                                reason: entry.unreadable ?? "")))
                }
            }
            state.ignored = ignored
            state.resolution = resolution
            return (apply(resolution), problems)
        }
    }

    /// Reads every file, the last directory first so that the first listed wins. `isApplied`:
    /// the values go into the suite as they are, every value counting (when it opens, before
    /// any key is declared), and ``resolution`` is theirs.
    func load(isApplied: Bool = false) -> Loaded {
        current.withLock { current in
            var loaded = Loaded()
            guard !directories.isEmpty else { return loaded }
            for directory in directories.reversed() {
                // Files are judged against the owner of the directory that lists them.
                guard let owner = (try? PosixFile.status(directory.path))?.st_uid else { continue }
                let vendorURL = directory.appendingPathComponent(fileName, isDirectory: false)
                let managedDirectory = directory.appendingPathComponent("managed", isDirectory: true)
                let managedURL = managedDirectory.appendingPathComponent(fileName, isDirectory: false)
                read(vendorURL, directoryOwner: owner, into: &loaded.vendorFiles, problems: &loaded.problems)
                if let refusal = Self.managedDirectoryRefusal(managedDirectory.path, directoryOwner: owner) {
                    loaded.problems.append(
                        DefaultsError(
                            suite: suiteName, kind: .unreadable, fileURL: managedURL,
                            message: "the administrator's file \(managedURL.path) was ignored: \(refusal)"))
                } else {
                    read(managedURL, directoryOwner: owner, into: &loaded.managedFiles, problems: &loaded.problems)
                }
            }
            current.loaded = loaded
            if isApplied {
                current.resolution = AdministratorResolution(loaded) { _, _ in nil }
            }
            return loaded
        }
    }

    /// Reads `url` and puts it before the files read so far (of directories listed after).
    private func read(
        _ url: URL, directoryOwner: uid_t, into files: inout [File], problems: inout [DefaultsError]
    ) {
        switch Self.readFile(url.path, directoryOwner: directoryOwner) {
        case .absent:
            break
        case .values(let values):
            files.insert(File(url: url, values: values), at: 0)
        case .problem(let reason):
            problems.append(
                DefaultsError(
                    suite: suiteName, kind: .unreadable, fileURL: url,
                    message: "the administrator's file \(url.path) was ignored: \(reason)"
                )
            )
        }
    }

    func startWatching(_ onChange: @escaping @Sendable () -> Void) {
        let watchers = directories.flatMap { directory in
            [directory, directory.appendingPathComponent("managed", isDirectory: true)].compactMap {
                FileWatcher(
                    directory: $0.path, fileName: fileName, queue: watcherQueue, onChange: onChange, onGone: {})
            }
        }
        self.watchers.withLock { $0 = watchers }
    }

    // MARK: Reading

    enum ReadOutcome {
        case absent
        case values([String: PropertyListValue])
        case problem(String)
    }

    /// Reads an administrator file through the one bounded reader: never through a link, only a
    /// regular file of root's or its directory owner's that no one else may write
    /// (``FileOwnership/administrator(directoryOwner:)``), no larger than a suite's file may be,
    /// and decoded as a suite's file is (``SuiteFile/decode(_:)``).
    static func readFile(_ path: String, directoryOwner: uid_t) -> ReadOutcome {
        let outcome: BoundedFileRead.Outcome
        do {
            outcome = try BoundedFileRead.read(
                path, followingLinks: false, ownership: .administrator(directoryOwner: directoryOwner))
        } catch let error as SystemCallError where error.code == ELOOP {
            return .problem("it is a symbolic link, which an administrator file may not be")
        } catch {
            return .problem("\(error)")
        }
        switch outcome {
        case .absent:
            return .absent
        case .notRegularFile(_, let kind):
            return .problem("it is \(kind), not a regular file")
        case .tooLarge:
            return .problem(BoundedFileRead.tooLargeReason())
        case .untrusted(_, let reason):
            return .problem(reason)
        case .file(_, let data):
            switch SuiteFile.decode(data) {
            case .success(let values): return .values(values)
            case .failure(let problem): return .problem(problem.description)
            }
        }
    }

    /// Why the `managed` directory in `directory` may not be trusted (a link, or a directory
    /// others may write or own), or `nil`.
    static func managedDirectoryRefusal(_ managed: String, directoryOwner: uid_t) -> String? {
        guard let info = try? PosixFile.linkStatus(managed) else { return nil }
        switch PosixFile.fileType(info) {
        case S_IFLNK: return "\(managed) is a symbolic link, which the administrator's directory may not be"
        case S_IFDIR: break
        default: return "\(managed) is not a directory"
        }
        return FileOwnership.administrator(directoryOwner: directoryOwner).refusal(of: info).map {
            "\(managed) cannot be trusted: \($0)"
        }
    }
}
