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

    /// The administrator's files that hold `key` for the suite `name`: the managed file that
    /// enforces it and the vendor file that gives its default, the first listed directory winning.
    /// Reads the files now, without opening the suite (which would move a damaged user file aside),
    /// as the `defaults` command needs; unreadable files count as absent.
    package static func administratorFiles(
        forKey key: String, suiteName name: String, directories: [URL] = defaultAdministratorDirectories
    ) -> (managed: URL?, vendor: URL?) {
        let loaded = AdministratorLayers(directories: directories, suiteName: name).load()
        return (loaded.managed.files[key], loaded.vendor.files[key])
    }

    /// The values of the administrator's files for the suite `name` as they are now, read without
    /// opening the suite: the vendor defaults and the enforced (managed) values, each merged over
    /// the directories, the first listed winning; unreadable files count as absent.
    package static func administratorValues(
        suiteName name: String, directories: [URL] = defaultAdministratorDirectories
    ) -> (vendor: [String: PropertyListValue], managed: [String: PropertyListValue]) {
        let loaded = AdministratorLayers(directories: directories, suiteName: name).load()
        return (loaded.vendor.values, loaded.managed.values)
    }

    /// What a program reads from the suite `name` whose user file holds `user`: the
    /// administrator's enforced values over `user` over the vendor defaults, resolved as a suite
    /// resolves them, without opening one (for the `defaults` command).
    package static func resolvedValues(
        suiteName name: String, user: [String: PropertyListValue],
        directories: [URL] = defaultAdministratorDirectories
    ) -> [String: PropertyListValue] {
        let loaded = AdministratorLayers(directories: directories, suiteName: name).load()
        return SuiteDomains(managed: loaded.managed.values, persistent: user, vendor: loaded.vendor.values).resolved
    }

    /// One file's value of a key: a layer a read of the key passes through.
    package struct StoredLayer: Sendable, Hashable {
        /// The kinds of file, named as `defaults read-source` names them.
        package enum Kind: String, Sendable, Hashable {
            case vendor, user, managed
        }

        package var kind: Kind
        package var file: URL
        package var value: PropertyListValue

        package init(kind: Kind, file: URL, value: PropertyListValue) {
            self.kind = kind
            self.file = file
            self.value = value
        }
    }

    /// Every file that holds a key, and the one a read takes its value from.
    package struct KeyLayers: Sendable {
        /// The files holding the key, the lowest precedence first: the vendor files (the last
        /// listed directory first), the user's file, the managed files (the last listed first).
        package var layers: [StoredLayer] = []
        /// The index in ``layers`` of the value a read returns; `nil` when no file gives it (the
        /// default declared in code is read, if there is one).
        package var readIndex: Int?
        /// The administrator's files that were ignored (unreadable, untrusted), with the reason.
        package var problems: [DefaultsError] = []
        /// The managed file that enforces the key, its value being one the key reads; `nil` when
        /// the key can be written.
        package var managedFile: URL?

        package init() {}
    }

    /// Every layer a read of `key` of the suite `name` passes through, file by file, and the one it
    /// returns, resolved by the rules a suite reads by (``SuiteDomains``, and the first listed
    /// directory winning within a layer), without opening the suite (for `defaults explain`).
    ///
    /// - Parameters:
    ///   - user: The value the user's file `userFile` holds, if any.
    ///   - accepts: Whether an administrator's value is read; one it refuses (a value that does
    ///     not fit its key's type) is listed but passed over, as if its file did not hold it.
    package static func layers(
        forKey key: String, suiteName name: String, user: PropertyListValue?, userFile: URL,
        directories: [URL] = defaultAdministratorDirectories,
        accepting accepts: (PropertyListValue) -> Bool = { _ in true }
    ) -> KeyLayers {
        var result = KeyLayers()
        let read = AdministratorLayers(directories: directories, suiteName: name).load()
        // Lowest first: the last listed directory's vendor file up to the first's, the user's,
        // then the managed files likewise.
        for file in read.vendorFiles.reversed() {
            if let value = file.values[key] {
                result.layers.append(StoredLayer(kind: .vendor, file: file.url, value: value))
            }
        }
        if let user {
            result.layers.append(StoredLayer(kind: .user, file: userFile, value: user))
        }
        for file in read.managedFiles.reversed() {
            if let value = file.values[key] {
                result.layers.append(StoredLayer(kind: .managed, file: file.url, value: value))
            }
        }
        // What a suite reads, with the values `accepts` refuses left out as a suite leaves out
        // those its keys cannot read.
        let ignoring: (String, PropertyListValue, URL) -> Bool = { name, value, _ in name != key || !accepts(value) }
        let vendor = AdministratorLayers.Loaded.merge(read.vendorFiles, isIgnored: ignoring)
        let managed = AdministratorLayers.Loaded.merge(read.managedFiles, isIgnored: ignoring)
        result.problems = read.problems
        result.managedFile = managed.files[key]
        let domains = SuiteDomains(
            managed: managed.values, persistent: user.map { [key: $0] } ?? [:], vendor: vendor.values)
        let file: URL?
        switch domains.source(forKey: key) {
        case .managed: file = managed.files[key]
        case .persistent: file = userFile
        case .vendor: file = vendor.files[key]
        case .argument, .registered, nil: file = nil
        }
        result.readIndex = file.flatMap { file in result.layers.firstIndex { $0.file == file } }
        return result
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

    /// Puts the administrator's values last read into the domains, but those that no key declared
    /// in this process can read (``Defaults/KeyRegistry/declarationRejecting(_:named:in:)``):
    /// such a value is reported once, naming its file, and a read goes on to the next layer, as
    /// if the file did not hold it. Posts the keys whose value or writability changed.
    func applyAdministratorLayers() {
        let (outcome, ignored) = administrator.withReadableValues(
            rejecting: { [unowned self] name, value in
                Defaults.KeyRegistry.declarationRejecting(value, named: name, in: self)
            },
            apply: { vendor, managed in editHoldingLocks(.administrator(vendor: vendor, managed: managed)) }
        )
        for problem in ignored {
            report(problem)
        }
        store.deliver(outcome)
    }
}

extension FileSuite {
    /// Told by ``Defaults/KeyRegistry`` of each key declared for the suite: a key declared after
    /// the administrator's files were read may not read a value they hold, so they are checked
    /// again, only when they hold its name.
    func keyWasDeclared(_ name: String) {
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
    /// One kind of layer merged over the directories, and the file each key came from.
    struct Layer: Sendable {
        var values: [String: PropertyListValue] = [:]
        var files: [String: URL] = [:]
    }

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

        var vendor: Layer { Self.merge(vendorFiles) }
        var managed: Layer { Self.merge(managedFiles) }

        /// Each key's value from the first file that holds one `isIgnored` does not ignore.
        static func merge(_ files: [File], isIgnored: (String, PropertyListValue, URL) -> Bool = { _, _, _ in false })
            -> Layer
        {
            var layer = Layer()
            for file in files {
                for (key, value) in file.values where layer.values[key] == nil && !isIgnored(key, value, file.url) {
                    layer.values[key] = value
                    layer.files[key] = file.url
                }
            }
            return layer
        }
    }

    /// A value of an administrator's file that no key of its name reads, reported once.
    private struct IgnoredValue: Hashable {
        let key: String
        let file: URL
        let value: PropertyListValue
    }

    private struct State {
        var loaded = Loaded()
        var ignored: Set<IgnoredValue> = []
        /// The file each value put into the suite came from.
        var applied: (vendor: [String: URL], managed: [String: URL]) = ([:], [:])
    }

    let directories: [URL]
    let suiteName: String
    /// Serializes loads and their application to the suite; keeps the values last read, and
    /// where each came from. Taken before the suite store's lock, never inside it.
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
        current.withLock { managed ? $0.applied.managed[key] : $0.applied.vendor[key] }
    }

    /// Whether a file read last holds `key`, as a default or enforced.
    func holds(_ key: String) -> Bool {
        current.withLock { state in
            state.loaded.managedFiles.contains { $0.values[key] != nil }
                || state.loaded.vendorFiles.contains { $0.values[key] != nil }
        }
    }

    /// Calls `apply` with the values read last but those `rejecting` names a key declaration
    /// for (a key then takes the next file's value), holding the lock so that two applications
    /// cannot cross; returns its result and a problem for each value newly ignored.
    func withReadableValues<Result>(
        rejecting: (String, PropertyListValue) -> Defaults.KeyDeclaration?,
        apply: ([String: PropertyListValue], [String: PropertyListValue]) -> Result
    ) -> (Result, [DefaultsError]) {
        current.withLock { state in
            var ignored: Set<IgnoredValue> = []
            var problems: [DefaultsError] = []
            func readable(_ files: [File], managed: Bool) -> Layer {
                Loaded.merge(files) { key, value, file in
                    guard let declaration = rejecting(key, value) else { return false }
                    let entry = IgnoredValue(key: key, file: file, value: value)
                    ignored.insert(entry)
                    if !state.ignored.contains(entry) {
                        problems.append(
                            DefaultsError(
                                suite: suiteName, kind: .wrongType, key: key, fileURL: file,
                                message: "the administrator's \(managed ? "enforced value" : "default") of \"\(key)\" "
                                    + "in \(file.path) was ignored: \(declaration) cannot read "
                                    + "\(value.kindName); the next layer is read"))
                    }
                    return true
                }
            }
            let vendor = readable(state.loaded.vendorFiles, managed: false)
            let managed = readable(state.loaded.managedFiles, managed: true)
            state.ignored = ignored
            state.applied = (vendor.files, managed.files)
            return (apply(vendor.values, managed.values), problems)
        }
    }

    /// Reads every file, the last directory first so that the first listed wins. `isApplied`:
    /// the values go into the suite as they are (when it opens, before any key is declared).
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
                current.applied = (loaded.vendor.files, loaded.managed.files)
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
