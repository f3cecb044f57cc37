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
///   retried. An empty file is an empty suite, once it has stayed empty for 3 seconds: another
///   program may be rewriting it in place (truncate, then write).
/// - **Links**: a suite file that is a link the user made (a dotfile kept in a repository), or a
///   chain of them, to a regular file the user owns (or a missing one in a directory the user
///   owns) is read through and written through: its target is replaced atomically in the target's
///   directory, so the link keeps working. A link another user made is neither read nor written
///   through; it is reported and left alone. Temporary and lock
///   files are created with names no one can guess and `O_EXCL | O_NOFOLLOW`, so links planted in a
///   shared directory are never written through.
public final class FileSuite: DefaultsSuite {
    public let name: String
    /// The property-list file.
    public let fileURL: URL
    /// Its values: this suite is the store's backend, which loads the file into it and persists
    /// its pending changes.
    package let store: SuiteStore

    public var changes: SuiteChangeCenter { store.changes }

    /// The property list and its companions (lock, temporary and backup files).
    let file: SuiteFile
    let coalescingDelay: Duration
    /// Which version of the file the store's values came from; changed only holding `io`.
    let fileState: Mutex<FileState>
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
    /// Whether a read has asked for watching to begin (``watchIfDue()``).
    let isWatchingScheduled = Atomic(false)
    /// When the suite was opened, for ``watchIfDue()``.
    let openedAt = ContinuousClock.now
    let administrator: AdministratorLayers
    /// Writes the pending changes a short while after they are made, on ``flush()``, and again
    /// after a failure.
    let writes: WriteScheduler<FileSuite>

    struct FileState {
        /// The version of the file that the store's persistent values (less its pending changes)
        /// were read from or written as; `nil` when there was no file.
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
        fileURL: fileURL(forName: StorageEnvironment.standardSuiteName),
        name: StorageEnvironment.standardSuiteName,
        arguments: nil,
        coalescingDelay: defaultCoalescingDelay,
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
            StorageEnvironment.logger.warning(
                "The suite name \"\(name)\" cannot name a file: \(problem). It is stored as \(Self.fileName(forName: name)); use a name such as com.example.app."
            )
        }
        self.init(
            fileURL: Self.fileURL(forName: name, in: directory ?? Self.defaultDirectory),
            name: name,
            arguments: arguments,
            coalescingDelay: coalescingDelay,
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
            fileURL: fileURL, name: name, arguments: arguments, coalescingDelay: coalescingDelay,
            administratorDirectories: [])
    }

    init(
        fileURL: URL, name: String?, arguments: [String]?, coalescingDelay: Duration,
        administratorDirectories: [URL] = []
    ) {
        let file = SuiteFile(url: fileURL)
        self.file = file
        self.fileURL = URL(fileURLWithPath: file.path, isDirectory: false)
        self.name = name ?? (file.fileName.hasSuffix(".plist") ? String(file.fileName.dropLast(6)) : file.fileName)
        self.coalescingDelay = coalescingDelay
        let launchArguments = arguments ?? Array(ProcessInfo.processInfo.arguments.dropFirst())
        var problems: [DefaultsError] = []
        let values: [String: PropertyListValue]
        let identity: FileIdentity?
        let read = Self.readMovingDamagedAside(
            file, suiteName: self.name, fileURL: self.fileURL, holdingLock: false, problems: &problems)
        switch read {
        case .values(let read, let readIdentity): (values, identity) = (read, readIdentity)
        case .absent, .blocked: (values, identity) = ([:], nil)
        }
        administrator = AdministratorLayers(directories: administratorDirectories, suiteName: self.name)
        writes = WriteScheduler(delay: coalescingDelay, retry: Self.writeRetry) { $0.writePending() }
        let layers = administrator.load(isApplied: true)
        let resolution = administrator.resolution
        let administrator = administrator
        store = SuiteStore(
            name: self.name, fileURL: self.fileURL,
            domains: SuiteDomains(
                managed: resolution.managedValues, arguments: ArgumentsDomain.parse(launchArguments),
                persistent: values, vendor: resolution.vendorValues),
            keepsPending: true,
            managedFile: { administrator.file(forKey: $0, managed: true) })
        fileState = Mutex(FileState(loadedIdentity: identity))
        store.changes.belongs(to: self)
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
        watchIfDue()
        return store.value(forKey: key)?.object
    }

    public var valueGeneration: UInt64? {
        watchIfDue()
        return store.generation.value
    }

    public func set(_ object: Any?, forKey key: String) {
        write(object, forKey: key)
    }

    public func removeAll() {
        edit(.removeAll)
    }

    public func register(defaults: [String: Any]) {
        edit(.register(registrable(defaults)))
    }

    public func persistentValues() -> [String: Any] {
        store.persistent.mapValues(\.object)
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
        store.problems.all
    }

    /// Called with each problem as it happens, on the thread that met it (a write, the watcher,
    /// ``flush()``), once the suite's locks are released: the handler may call ``flush()`` or
    /// ``reload()`` (a flush that fails again reports again, so do not flush at every call).
    /// Problems found while opening the suite are in ``problems``.
    public var onProblem: (@Sendable (DefaultsError) -> Void)? {
        get { store.problems.onProblem }
        set { store.problems.onProblem = newValue }
    }

    /// How many times this suite has replaced its file (for tests and benchmarks).
    @_spi(Testing) public var writeCount: Int {
        fileState.withLock { $0.writeCount }
    }

    /// Adds `problems` to ``problems``. A reload records what it found before it lets go of `io`,
    /// so that a ``reload()`` waiting for it returns with them visible.
    func record(_ problems: [DefaultsError]) {
        store.problems.record(problems)
    }

    /// Logs `problem` and calls ``onProblem``, with no suite lock held.
    func announce(_ problem: DefaultsError) {
        store.problems.announce(problem)
    }
}

extension FileSuite: StoreBackedSuite {
    /// Writes the file a short while after this process's edits.
    package func persist(_ outcome: SuiteEdit.Outcome) {
        writes.writeLater(self)
    }

    /// Decides and applies the edit inside ``synchronize(editing:)``: holding `io` and the file
    /// lock, on the file as other processes left it, written once before this returns.
    package func editExclusively(_ decide: (SuiteStore) -> SuiteEdit?) {
        synchronize { held in
            if let decided = decide(store) {
                editHoldingLocks(decided, into: &held, isPersistedByCaller: true)
            }
        }
    }
}
