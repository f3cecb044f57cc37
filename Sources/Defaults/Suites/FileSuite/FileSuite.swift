import DefaultsFiles
import DefaultsPropertyList
import Foundation
import Logging
import Synchronization

/// A suite stored in a property-list file, durable and shared between processes: the default
/// suite on Linux.
///
/// ```swift
/// let settings = FileSuite(name: "com.example.app")   // ~/.config/com.example.app.plist
/// let volume = Defaults.Key<Int>("volume", default: 5, suite: settings)
/// Defaults[volume] = 7        // in memory at once, on disk within ~50 ms
/// try settings.flush()        // returns once the value is durable
/// ```
///
/// - **Location and format**: Foundation's on Linux (`$XDG_CONFIG_HOME` or `~/.config`,
///   `<name>.plist`, an XML property list, mode 0600 in a 0700 directory), so Foundation's
///   `UserDefaults(suiteName:)` reads what this suite writes and the reverse. A suite can also be
///   opened at any file URL.
/// - **Reads** are served from memory, resolving launch arguments (`-name value`, never written
///   to disk), the persistent values, then registered defaults.
/// - **Writes** are in memory at once and reach the disk within a short coalescing window, so
///   that many writes share one file write. ``flush()`` and ``Defaults/flushAll()`` return only
///   when the data is durable (a temporary file, `fsync`, `rename`, `fsync` of the directory).
///   Pending writes are flushed at normal exit and on `SIGTERM`/`SIGINT`, after which the signal
///   ends the process as it would have. The library installs its signal handlers only where the
///   signal's disposition is still the default: a process with its own handlers keeps them, and
///   should call ``Defaults/flushAll()`` on its way out (from its shutdown code, not from inside
///   the signal handler, where taking locks is unsafe).
/// - **Several processes** can share a suite: a writer takes an advisory lock, merges with the
///   file if another process changed it, and applies only its own changes, so no process loses
///   another's keys. Changes made by other processes are seen through a file watcher (inotify)
///   and posted to ``changes`` with the origin ``SuiteChange/Origin/otherProcess``.
/// - **One instance per file** in a process is best: two instances of the same file stay correct
///   (they lock and merge like two processes) but each sees the other's writes as coming from
///   another process, once they are on disk.
/// - **Bad files** never crash the process and are never silently overwritten: a file that does
///   not parse (including text that is not valid UTF-8, and a binary file whose shared references
///   would expand far beyond its size) is moved aside to `<name>.plist.corrupt-<timestamp>`, the
///   problem is reported through ``problems``, ``onProblem`` and ``Defaults/logger``, and the
///   suite goes on with its defaults. A directory, FIFO or device in the file's place is never
///   opened for long nor read (a file over 64 MB is not read either): it is reported and left in
///   place, and writes fail until it is gone. A write that fails keeps the values in memory and is
///   retried. An empty file is an empty suite.
/// - **Links**: a suite file that is a link the user made (a dotfile kept in a repository), or a
///   chain of them, to a regular file the user owns (or a missing one in a directory the user
///   owns) is read through and written through: its target is replaced atomically in the target's
///   directory, so the link keeps working. A link another user made is neither read nor written
///   through; it is reported and left alone. Temporary and lock
///   files are created with names no one can guess and `O_EXCL | O_NOFOLLOW`, so links planted in a
///   shared directory are never written through.
public final class FileSuite: DefaultsSuite, PropertyListValueSuite {
    public let name: String
    /// The property-list file.
    public let fileURL: URL
    public let changes = SuiteChangeCenter()

    /// The property list and its companions (lock, temporary and backup files).
    let file: SuiteFile
    let coalescingDelay: Duration
    /// The standard suite mirrors registered defaults into `UserDefaults.standard`, so that code
    /// reading it directly sees them as Foundation code expects.
    let mirrorsRegistrationToStandardUserDefaults: Bool
    let state: Mutex<State>
    /// Advanced by `state.domains` on every change; read without the lock (``valueGeneration``).
    let generation = SuiteGeneration()
    /// Serializes this process's disk I/O for the suite (writes and reloads), so that a reload
    /// cannot apply a file older than one this process has just written.
    let io = Mutex(IOState())
    let watchers = Mutex<[FileWatcher]>([])
    /// Where the watchers call back: one serial queue, also when the file is a link and both its
    /// directory and the target's are watched.
    let watcherQueue = DispatchQueue(label: "swift-defaults file watcher")
    /// Whether an attempt to watch again a directory that went away is scheduled.
    let isResumingWatching = Atomic(false)
    /// Whether watching has begun (``watchFromNowOn()``).
    let hasBegunWatching = Atomic(false)
    let problemLog = SuiteProblems()
    let administrator: AdministratorLayers
    /// Writes the pending changes a short while after they are made, on ``flush()``, and again
    /// after a failure.
    let writes: WriteScheduler<FileSuite>
    /// Runs before each new version of the file is written, holding the suite's locks, with the
    /// keys it changes (`nil`: every key): the sync engine makes its journal durable there, so
    /// that another process never sees a synced value without its journal entry.
    let beforeWrite = Mutex<(@Sendable (_ keys: Set<String>?) -> Void)?>(nil)

    struct State {
        var domains: SuiteDomains
        /// This process's changes not yet on disk.
        var pending = PendingChanges()
        /// The version of the file that `domains.persistent` (less `pending`) was read from or
        /// written as; `nil` when there was no file.
        var loadedIdentity: FileIdentity?
        /// The file a write of this process is renaming into place, until the write returns.
        var renamingIdentity: FileIdentity?
        var writeCount = 0
    }

    struct IOState {
        var hasRemovedStaleTemporaryFiles = false
        /// Something in the file's place (a directory, a FIFO) already reported by the watcher, not
        /// to report it on every event.
        var reportedBlockage: FileIdentity?
        /// Keeps the last XML written and each key's value, so that a write encodes only what changed.
        var xmlEncoder = XMLDictionaryEncoder()
        /// The file `xmlEncoder`'s last document was written as; `nil` after a write that failed.
        var xmlEncoderIdentity: FileIdentity?
    }

    /// The standard suite of this process on Linux: the file Foundation's `UserDefaults.standard`
    /// uses, `<bundle identifier or process name>.plist`, with the process's launch arguments.
    public static let standard = FileSuite(
        fileURL: fileURL(forName: Defaults.standardSuiteName),
        name: Defaults.standardSuiteName,
        arguments: nil,
        coalescingDelay: defaultCoalescingDelay,
        mirrorsRegistration: true,
        administratorDirectories: defaultAdministratorDirectories
    )

    /// How long writes are collected before they are written together, unless given.
    public static let defaultCoalescingDelay: Duration = .milliseconds(50)

    /// Opens the suite `name`, stored as `<name>.plist` in `directory` (Foundation's directory,
    /// ``defaultDirectory``, unless given).
    ///
    /// - Parameters:
    ///   - name: The suite name, as for `UserDefaults(suiteName:)`, for example `com.example.app`.
    ///   - directory: Where the file lives; tests and sandboxed tools can give their own.
    ///   - arguments: Launch arguments for the arguments domain (`["-volume", "3"]`); `nil` for the
    ///     process's own.
    ///   - coalescingDelay: How long writes wait to be written together.
    ///   - administratorDirectories: Where the administrator's `<name>.plist` (vendor defaults)
    ///     and `managed/<name>.plist` (enforced values) are, the first winning;
    ///     ``defaultAdministratorDirectories`` (`XDG_CONFIG_DIRS`) unless given.
    ///
    /// A name that cannot name a file (empty, `.`, `..`, or holding `/` or NUL) is escaped (see
    /// ``fileURL(forName:in:)``) and a warning is logged: the suite works all the same.
    public convenience init(
        name: String,
        directory: URL? = nil,
        arguments: [String]? = nil,
        coalescingDelay: Duration = FileSuite.defaultCoalescingDelay,
        administratorDirectories: [URL]? = nil
    ) {
        if let problem = Self.nameProblem(name) {
            Defaults.logger.warning(
                "The suite name \"\(name)\" cannot name a file: \(problem). It is stored as \(Self.fileName(forName: name)); use a name such as com.example.app."
            )
        }
        self.init(
            fileURL: Self.fileURL(forName: name, in: directory ?? Self.defaultDirectory),
            name: name,
            arguments: arguments,
            coalescingDelay: coalescingDelay,
            mirrorsRegistration: false,
            administratorDirectories: administratorDirectories ?? Self.defaultAdministratorDirectories
        )
    }

    /// Opens a suite stored at an explicit file URL.
    ///
    /// - Parameters:
    ///   - fileURL: The property-list file; its directory is created (mode 0700) when needed.
    ///   - name: The suite name reported in errors and logs; the file name without `.plist` if `nil`.
    ///   - arguments: Launch arguments for the arguments domain; `nil` for the process's own.
    ///   - coalescingDelay: How long writes wait to be written together.
    public convenience init(
        fileURL: URL,
        name: String? = nil,
        arguments: [String]? = nil,
        coalescingDelay: Duration = FileSuite.defaultCoalescingDelay
    ) {
        self.init(
            fileURL: fileURL,
            name: name,
            arguments: arguments,
            coalescingDelay: coalescingDelay,
            mirrorsRegistration: false
        )
    }

    init(
        fileURL: URL, name: String?, arguments: [String]?, coalescingDelay: Duration, mirrorsRegistration: Bool,
        administratorDirectories: [URL] = []
    ) {
        let file = SuiteFile(url: fileURL)
        self.file = file
        self.fileURL = URL(fileURLWithPath: file.path, isDirectory: false)
        self.name = name ?? (file.fileName.hasSuffix(".plist") ? String(file.fileName.dropLast(6)) : file.fileName)
        self.coalescingDelay = coalescingDelay
        self.mirrorsRegistrationToStandardUserDefaults = mirrorsRegistration
        let launchArguments = arguments ?? Array(ProcessInfo.processInfo.arguments.dropFirst())
        var problems: [DefaultsError] = []
        let values: [String: PropertyListValue]
        let identity: FileIdentity?
        switch Self.read(file, suiteName: self.name, fileURL: self.fileURL, holdingLock: false, problems: &problems) {
        case .values(let read, let readIdentity): (values, identity) = (read, readIdentity)
        case .absent, .blocked: (values, identity) = ([:], nil)
        }
        administrator = AdministratorLayers(directories: administratorDirectories, suiteName: self.name)
        writes = WriteScheduler(delay: coalescingDelay, retry: Self.writeRetry) { $0.writePending() }
        let layers = administrator.load()
        state = Mutex(
            State(
                domains: SuiteDomains(
                    managed: layers.managed.values, arguments: ArgumentsDomain.parse(launchArguments),
                    persistent: values, vendor: layers.vendor.values, generation: generation),
                loadedIdentity: identity
            )
        )
        for problem in problems + layers.problems {
            report(problem)
        }
        SuiteRegistry.add(self)
        watchWhenNeeded()
    }

    deinit {
        // Nothing to write here: a suite with pending changes is kept alive by its scheduled write
        // until they are on disk (see `WriteScheduler`).
        watchers.withLock { watchers in
            for watcher in watchers {
                watcher.stop()
            }
        }
    }

    // MARK: DefaultsSuite

    public func object(forKey key: String) -> Any? {
        state.withLock { $0.domains.value(forKey: key) }?.object
    }

    func propertyListValue(forKey key: String) -> PropertyListValue? {
        state.withLock { $0.domains.value(forKey: key) }
    }

    func persistentPropertyListValues() -> [String: PropertyListValue] {
        state.withLock { $0.domains.persistent }
    }

    func storedPropertyListLayers() -> [[String: PropertyListValue]] {
        state.withLock { $0.domains.storedLayers }
    }

    public var valueGeneration: UInt64? { generation.value }

    public func set(_ object: Any?, forKey key: String) {
        let value: PropertyListValue?
        switch SuiteWrite.convert(object, forKey: key, suite: name, fileURL: fileURL) {
        case .success(let converted): value = converted
        case .failure(let problem): return report(problem)
        }
        // Telling whether the value changed costs two lookups and a comparison; skip it when
        // nobody listens. (An observer added during this write may miss it, as it would if it
        // had been added just after.)
        let isObserved = changes.observerCount > 0
        var isChanged = false
        let managed = state.withLock { state in
            // Under the write's own lock: no administrator reload between the check and the write.
            let managed = state.domains.write(CollectionOfOne((key: key, value: value)), tellsChanges: isObserved) {
                _ in
                isChanged = true
            }
            if managed.isEmpty {
                state.pending.record(value, forKey: key)
            }
            return managed
        }
        guard managed.isEmpty else { return reportManagedWrite(key) }
        writes.writeLater(self)
        if isChanged {
            changes.post(SuiteChange(keys: [key]))
        }
    }

    public func removeAll() {
        let keys = state.withLock { state in
            state.pending.recordRemoveAll()
            return state.domains.replacePersistent(with: [:])
        }
        writes.writeLater(self)
        changes.post(SuiteChange(keys: keys))
    }

    public func register(defaults: [String: Any]) {
        let values = registrable(defaults)
        if mirrorsRegistrationToStandardUserDefaults {
            UserDefaults.standard.register(defaults: values.mapValues(\.object))
        }
        changes.post(SuiteChange(keys: state.withLock { $0.domains.register(values) }))
    }

    public func persistentValues() -> [String: Any] {
        state.withLock { $0.domains.persistent }.mapValues(\.object)
    }

    /// Writes every pending change to the file and returns when it is durable.
    ///
    /// - Throws: ``DefaultsError`` when the file cannot be written (an unwritable directory, a full
    ///   disk, a directory in the file's place). The values stay in memory and are written by the
    ///   next flush or write that succeeds.
    public func flush() throws {
        // Inside `modify` on this thread (an observer or a problem handler it reached): the
        // pending changes are written by that `modify` before it returns.
        guard !isSynchronizingOnThisThread else { return }
        try writes.flush(self)
    }

    // MARK: Problems

    /// Problems met with the file since the suite was opened, oldest first (at most the last 100):
    /// files that did not parse and where they were moved, writes that failed.
    public var problems: [DefaultsError] {
        problemLog.all
    }

    /// Called with each problem as it happens, on the thread that met it (a write, the watcher,
    /// ``flush()``), once the suite's locks are released: the handler may call ``flush()`` or
    /// ``reload()`` (a flush that fails again reports again, so do not flush at every call).
    /// Problems found while opening the suite are in ``problems``.
    public var onProblem: (@Sendable (DefaultsError) -> Void)? {
        get { problemLog.onProblem }
        set { problemLog.onProblem = newValue }
    }

    /// How many times this suite has replaced its file (for tests and benchmarks).
    @_spi(Testing) public var writeCount: Int {
        state.withLock { $0.writeCount }
    }

    package func report(_ problem: DefaultsError) {
        problemLog.report(problem)
    }

    /// Adds `problems` to ``problems``. A reload records what it found before it lets go of `io`,
    /// so that a ``reload()`` waiting for it returns with them visible.
    func record(_ problems: [DefaultsError]) {
        problemLog.record(problems)
    }

    /// Logs `problem` and calls ``onProblem``, with no suite lock held.
    func announce(_ problem: DefaultsError) {
        problemLog.announce(problem)
    }
}

extension FileSuite: EditableSuite {
    package var problemFileURL: URL? { fileURL }
}

/// One process's changes to a suite that are not on disk yet: what it set and removed, after
/// removing everything if it did. Applied on top of the file as found when writing, so that
/// other processes' keys are kept.
struct PendingChanges {
    /// What happens to one key: not a ``Defaults/KeyChange`` (what a read sees), but the edit
    /// this process makes to the stored values.
    enum Edit {
        case set(PropertyListValue)
        case removed
    }

    var removesAll = false
    var changes: [String: Edit] = [:]

    var isEmpty: Bool { !removesAll && changes.isEmpty }

    mutating func record(_ value: PropertyListValue?, forKey key: String) {
        changes[key] = value.map(Edit.set) ?? .removed
    }

    mutating func recordRemoveAll() {
        removesAll = true
        changes.removeAll()
    }

    /// `base` with these changes made.
    func applied(to base: [String: PropertyListValue]) -> [String: PropertyListValue] {
        var result = removesAll ? [:] : base
        for (key, change) in changes {
            switch change {
            case .set(let value): result[key] = value
            case .removed: result[key] = nil
            }
        }
        return result
    }

    /// These changes followed by `newer`: to put back changes whose write failed, in front of
    /// the ones made meanwhile.
    func followed(by newer: PendingChanges) -> PendingChanges {
        if newer.removesAll {
            return newer
        }
        var result = self
        result.changes.merge(newer.changes) { _, new in new }
        return result
    }
}
