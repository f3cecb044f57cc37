import DefaultsPropertyList
import Foundation

/// The administrator's layers of one suite, resolved: for each key, every administrator's file
/// that holds it, whether the key reads each value, and the value a read takes from them (the
/// first listed directory's value the key reads, managed over vendor), and so whether the key can
/// be written.
///
/// The one answer to "which administrator's file wins for this key, and can the key read its
/// value": made once for each read of the files and each rule of which values a key reads. A
/// ``FileSuite`` keeps the resolution it applied (``AdministratorLayers``, under its lock
/// `current`), with the library's rule (``DeclaredKeyRule``, installed by the key registry);
/// the `defaults` command makes one per run with its schema's rule. The values a suite reads,
/// where a value comes from, every layer of a key (`explain`, `read-source`), writability and
/// an edit beneath the administrator's values are all answered from it.
package struct AdministratorResolution: Sendable {
    /// One administrator's file's value of a key.
    package struct Entry: Sendable, Hashable {
        package var key: String
        /// Enforced (`<dir>/managed/<suite>.plist`) rather than a vendor default.
        package var isManaged: Bool
        package var file: URL
        package var value: PropertyListValue
        /// Why the key does not read the value (`expected integer, found string`): a read passes
        /// over it, as if the file did not hold it. `nil` when the key reads it.
        package var unreadable: String?
    }

    /// What the administrator's files hold of one key.
    package struct KeyResolution: Sendable {
        /// Every administrator's value of the key, the highest precedence first: the managed
        /// files' (the first listed directory's first), then the vendor files'.
        package var entries: [Entry] = []

        /// The enforced value a read returns: the first managed value the key reads. `nil` when
        /// none enforces the key: it can be written.
        package var managed: Entry? { entries.first { $0.isManaged && $0.unreadable == nil } }

        /// The vendor default beneath the user's value: the first vendor value the key reads.
        package var vendor: Entry? { entries.first { !$0.isManaged && $0.unreadable == nil } }

        /// The values left out because the key cannot read them, each above the one of its
        /// kind that is read (or all of its kind when none is): a read passes over them.
        package var ignored: [Entry] {
            var ignored: [Entry] = []
            var decided: Set<Bool> = []
            for entry in entries where !decided.contains(entry.isManaged) {
                if entry.unreadable == nil {
                    decided.insert(entry.isManaged)
                } else {
                    ignored.append(entry)
                }
            }
            return ignored
        }

        /// Managed by the file of ``managed``, or writable.
        package var writability: DefaultsWritability {
            managed.map { .managed(file: $0.file) } ?? .writable
        }
    }

    private var keys: [String: KeyResolution] = [:]
    /// The enforced values a read sees, each key's from the first managed file whose value it reads.
    package private(set) var managedValues: [String: PropertyListValue] = [:]
    /// The vendor defaults a read sees, likewise.
    package private(set) var vendorValues: [String: PropertyListValue] = [:]
    /// The administrator's files that were ignored (unreadable, untrusted), with the reason.
    package private(set) var problems: [DefaultsError] = []

    /// No layers: the global domain and files given by path have none.
    package init() {}

    /// Resolves the files `loaded`.
    ///
    /// - Parameter unreadable: Why the key of a name does not read a value, or `nil` when it
    ///   does. Asked of every value of every file, once.
    init(_ loaded: AdministratorLayers.Loaded, unreadable: (_ key: String, _ value: PropertyListValue) -> String?) {
        problems = loaded.problems
        for (files, isManaged) in [(loaded.managedFiles, true), (loaded.vendorFiles, false)] {
            for file in files {
                for (key, value) in file.values {
                    let reason = unreadable(key, value)
                    keys[key, default: KeyResolution()].entries.append(
                        Entry(key: key, isManaged: isManaged, file: file.url, value: value, unreadable: reason))
                    guard reason == nil else { continue }
                    if isManaged {
                        managedValues[key] = managedValues[key] ?? value
                    } else {
                        vendorValues[key] = vendorValues[key] ?? value
                    }
                }
            }
        }
    }

    /// Reads the administrator's files of the suite `name` now, without opening the suite (which
    /// would move a damaged user file aside), and resolves them (for the `defaults` command).
    ///
    /// - Parameter unreadable: Why the program's key of a name does not read a value, or `nil`
    ///   when it does (or when the program is not known: then every value counts).
    package init(
        suiteName name: String, directories: [URL] = FileSuite.defaultAdministratorDirectories,
        unreadable: (_ key: String, _ value: PropertyListValue) -> String? = { _, _ in nil }
    ) {
        self.init(AdministratorLayers(directories: directories, suiteName: name).load(), unreadable: unreadable)
    }

    /// What the files hold of `key`.
    package func resolution(forKey key: String) -> KeyResolution {
        keys[key] ?? KeyResolution()
    }

    /// Every key some file holds.
    package var heldKeys: Dictionary<String, KeyResolution>.Keys { keys.keys }

    /// Every value left out because its key cannot read it (``KeyResolution/ignored``).
    package var ignored: [Entry] { keys.values.flatMap(\.ignored) }

    /// Whether `key` can be written, or which managed file enforces it.
    package func writability(ofKey key: String) -> DefaultsWritability {
        keys[key]?.writability ?? .writable
    }

    /// The managed file that enforces `key`; `nil` when the key can be written.
    package func managedFile(forKey key: String) -> URL? {
        keys[key]?.managed?.file
    }

    /// The vendor file whose default of `key` a read beneath the user's value takes.
    package func vendorFile(forKey key: String) -> URL? {
        keys[key]?.vendor?.file
    }

    /// What a program reads from the suite whose user file holds `user`: the enforced values
    /// over `user` over the vendor defaults, by the suite's own order (``SuiteDomains``).
    package func resolvedValues(user: [String: PropertyListValue]) -> [String: PropertyListValue] {
        SuiteDomains(managed: managedValues, persistent: user, vendor: vendorValues).resolved
    }

    /// What a person is told of an administrator's value a read passes over.
    package static func ignoredMessage(key: String, isManaged: Bool, file: URL, reason: String) -> String {
        "the administrator's \(isManaged ? "enforced value" : "default") of \"\(key)\" in \(file.path) "
            + "was ignored: \(reason); the next layer is read"
    }

    // MARK: Layers of one key

    /// One file's value of a key: a layer a read of the key passes through.
    package struct StoredLayer: Sendable, Hashable {
        /// The kinds of file, named as `defaults read-source` names them.
        package enum Kind: String, Sendable, Hashable {
            case vendor, user, managed
        }

        package var kind: Kind
        package var file: URL
        package var value: PropertyListValue
        /// For an administrator's value: why the key does not read it, so that a read passes it over.
        package var unreadable: String?

        package init(kind: Kind, file: URL, value: PropertyListValue, unreadable: String? = nil) {
            self.kind = kind
            self.file = file
            self.value = value
            self.unreadable = unreadable
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
        /// Whether the key can be written, or which managed file enforces it.
        package var writability: DefaultsWritability = .writable
        /// The administrator's values the key cannot read and a read passes over
        /// (``KeyResolution/ignored``, the rule a suite reports them by): what a person is told
        /// was ignored, the highest precedence first.
        package var passedOver: [StoredLayer] = []

        package init() {}
    }

    /// Every layer a read of `key` passes through, file by file, and the one it returns (for
    /// `defaults explain` and `read-source`).
    ///
    /// - Parameters:
    ///   - user: The value the user's file `userFile` holds, if any.
    package func layers(forKey key: String, user: PropertyListValue?, userFile: URL) -> KeyLayers {
        let resolved = resolution(forKey: key)
        func stored(_ entry: Entry) -> StoredLayer {
            StoredLayer(
                kind: entry.isManaged ? .managed : .vendor, file: entry.file, value: entry.value,
                unreadable: entry.unreadable)
        }
        var result = KeyLayers()
        result.layers = resolved.entries.filter { !$0.isManaged }.reversed().map(stored)
        if let user {
            result.layers.append(StoredLayer(kind: .user, file: userFile, value: user))
        }
        result.layers += resolved.entries.filter(\.isManaged).reversed().map(stored)
        result.problems = problems
        result.writability = resolved.writability
        result.passedOver = resolved.ignored.map(stored)
        // The suite's order decides which of the values read wins.
        let domains = SuiteDomains(
            managed: resolved.managed.map { [key: $0.value] } ?? [:], persistent: user.map { [key: $0] } ?? [:],
            vendor: resolved.vendor.map { [key: $0.value] } ?? [:])
        let read: (kind: StoredLayer.Kind, file: URL)?
        switch domains.source(forKey: key) {
        case .managed: read = resolved.managed.map { (.managed, $0.file) }
        case .persistent: read = (.user, userFile)
        case .vendor: read = resolved.vendor.map { (.vendor, $0.file) }
        case .argument, .registered, nil: read = nil
        }
        result.readIndex = read.flatMap { read in
            result.layers.firstIndex { $0.kind == read.kind && $0.file == read.file }
        }
        return result
    }

    // MARK: Edits beneath the layers

    /// What `edits`, applied in order as one edit of the user's values `user`, leave of them.
    package struct Applied {
        /// The user's values after the edits; `user` itself when they were refused whole.
        package var user: [String: PropertyListValue]
        /// The keys the administrator enforces that the edits wrote, in order: left unwritten
        /// (``SuiteEdit/ManagedKeys/skip``) or refusing every edit
        /// (``SuiteEdit/ManagedKeys/refuseWholeEdit``).
        package var managed: [String] = []
    }

    /// Applies `edits` to the user's values `user`, beneath these layers, by the rules every
    /// write of a suite follows (``SuiteDomains/apply(_:tellsChanges:managedKeys:)``), for the
    /// `defaults` command: a key is enforced only by a managed value it reads.
    package func applying(
        _ edits: [SuiteEdit], to user: [String: PropertyListValue], managedKeys: SuiteEdit.ManagedKeys
    ) -> Applied {
        var domains = SuiteDomains(managed: managedValues, persistent: user, vendor: vendorValues)
        var managedKeysWritten: [String] = []
        for edit in edits {
            let outcome = domains.apply(edit, tellsChanges: false, managedKeys: managedKeys)
            managedKeysWritten += outcome.managed.filter { !managedKeysWritten.contains($0) }
            if managedKeys == .refuseWholeEdit, !outcome.managed.isEmpty {
                return Applied(user: user, managed: managedKeysWritten)
            }
        }
        return Applied(user: domains.persistent, managed: managedKeysWritten)
    }
}
