import DefaultsPropertyList
import Foundation

extension FileSuite {
    /// The administrator's layers of a suite, read now without opening the suite (which would
    /// move a damaged user file aside), as a program reads them: for the `defaults` command,
    /// whose edits of a domain's file are applied beneath them by the one function that changes
    /// a suite's domains (``SuiteDomains/apply(_:tellsChanges:managedKeys:)``), and with it the
    /// administrator's rule.
    package struct Administration: Sendable {
        private let vendor: AdministratorLayers.Layer
        private let managed: AdministratorLayers.Layer
        /// The administrator's files that were ignored (unreadable, untrusted).
        package let problems: [DefaultsError]

        /// No layers: the global domain and files given by path have none.
        package init() {
            vendor = AdministratorLayers.Layer()
            managed = AdministratorLayers.Layer()
            problems = []
        }

        /// Reads the administrator's files of the suite `name`.
        ///
        /// - Parameter reads: Whether the program's key of a name reads a value. A value it does
        ///   not read is left out, and the next file's value (or the next layer) is read, as a
        ///   suite leaves out a value no key declared in its program can read
        ///   (``Defaults/KeyRegistry/declarationRejecting(_:named:in:)``): such a key is not
        ///   enforced.
        package init(
            suiteName name: String, directories: [URL] = FileSuite.defaultAdministratorDirectories,
            reading reads: (_ key: String, _ value: PropertyListValue) -> Bool = { _, _ in true }
        ) {
            let loaded = AdministratorLayers(directories: directories, suiteName: name).load()
            vendor = AdministratorLayers.Loaded.merge(loaded.vendorFiles) { key, value, _ in !reads(key, value) }
            managed = AdministratorLayers.Loaded.merge(loaded.managedFiles) { key, value, _ in !reads(key, value) }
            problems = loaded.problems
        }

        /// The managed file that enforces `key`; `nil` when the key can be written.
        package func managedFile(forKey key: String) -> URL? {
            managed.files[key]
        }

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
        /// write of a suite follows.
        package func applying(
            _ edits: [SuiteEdit], to user: [String: PropertyListValue], managedKeys: SuiteEdit.ManagedKeys
        ) -> Applied {
            var domains = SuiteDomains(managed: managed.values, persistent: user, vendor: vendor.values)
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
}

extension KeyMove {
    /// A move of `value` from `formerName` to `key`, made where `formerName` still holds it and
    /// `key` holds nothing (for the `defaults` command's `migrate`, which only renames).
    package init(renaming formerName: String, to key: String, value: PropertyListValue) {
        self.init(from: formerName, to: key, expected: value, value: value)
    }
}
