import DefaultsPropertyList

/// Reading a file that may be damaged, for a writer that must go on: a file that does not parse
/// is moved aside to a named backup, never overwritten; a directory, FIFO, device or unreadable
/// file is left alone, and blocks writes.
extension SuiteFile {
    /// What ``readMovingDamagedAside(holdingLock:)`` found.
    package enum Recovered {
        case values([String: PropertyListValue], FileIdentity)
        /// No file, or a damaged one now moved aside to `backupPath` for the reason given.
        case absent(movedAside: (backupPath: String, reason: String)?)
        /// Something left in place that must not be replaced.
        case blocked(FileIdentity?, Blockage)
    }

    /// Why a file is left in place and not replaced.
    package enum Blockage: Sendable {
        /// A directory, FIFO, device or socket.
        case notRegularFile(kind: String)
        /// A file that could not be read (permissions, an I/O error, far too large).
        case unreadable(reason: String)
        /// A damaged file that could not be moved aside.
        case unmovable(reason: String, error: any Error)
        /// A writer keeps replacing the file with damaged versions.
        case keepsChanging
    }

    /// Reads the file, moving a damaged version aside (under the lock, taken here unless the
    /// caller holds it) so that the writer may replace it. See ``read()``.
    package func readMovingDamagedAside(holdingLock: Bool) -> Recovered {
        // A writer may keep replacing the file with damaged versions; judge a few, then give up.
        for _ in 0..<5 {
            switch read() {
            case .values(let values, let identity):
                return .values(values, identity)
            case .absent:
                return .absent(movedAside: nil)
            case .notRegularFile(let identity, let kind):
                return .blocked(identity, .notRegularFile(kind: kind))
            case .unreadable(let reason):
                return .blocked(nil, .unreadable(reason: reason))
            case .damaged(let identity, let reason):
                let moved: MoveAside
                do {
                    moved = try holdingLock ? moveAside(identity) : withLock { try moveAside(identity) }
                } catch {
                    return .blocked(identity, .unmovable(reason: reason, error: error))
                }
                if case .moved(let backupPath) = moved {
                    return .absent(movedAside: (backupPath, reason))
                }
            }
        }
        return .blocked(nil, .keepsChanging)
    }

    /// What ``edit(replacingDamaged:_:)`` did.
    package struct Edit {
        /// Where a damaged version of the file was moved.
        package var backupPath: String?
        /// Whether the values changed, and the file was written.
        package var isWritten = false
        /// The version of the file the edit left: the one written, or the one read when the values
        /// were unchanged (`nil` for a file still absent).
        package var identity: FileIdentity?
        /// That version, held open for the next edit's `known`, when asked for.
        package var held: HeldFileVersion?
    }

    /// The one locked edit of a whole file: holding its lock, reads its values as other writers
    /// left them, lets `body` change them, and writes them (atomically and durably) before the
    /// lock is released; nothing is written when they are unchanged or `body` throws.
    ///
    /// - Parameters:
    ///   - replacingDamaged: Whether a file that is not a property list is moved aside (to a
    ///     backup, named in the result) so that the edit replaces it; otherwise it fails the edit
    ///     and is left where it is.
    ///   - known: A version of the file an edit left (``Edit/held``), and its values: while the
    ///     file is still that version (checked under the lock), they are taken instead of reading
    ///     and parsing it again.
    ///   - holdingVersion: Whether the edit holds the version it leaves open (``Edit/held``), for
    ///     the next edit's `known`.
    /// - Throws: ``FileRefusal`` for a file left in place, what the lock or the write throws
    ///   (``TooLargeToReadBack`` for values no reader would take), or what `body` throws.
    package func edit(
        replacingDamaged: Bool, known: (version: HeldFileVersion, values: [String: PropertyListValue])? = nil,
        holdingVersion: Bool = false,
        _ body: (inout [String: PropertyListValue]) throws -> Void
    ) throws -> Edit {
        try withLock {
            var edit = Edit()
            var values: [String: PropertyListValue] = [:]
            let found: Recovered
            if let known, known.version.isCurrent(at: path) {
                found = .values(known.values, known.version.identity)
            } else if replacingDamaged {
                found = readMovingDamagedAside(holdingLock: true)
            } else {
                switch read() {
                case .values(let read, let identity): found = .values(read, identity)
                case .absent: found = .absent(movedAside: nil)
                case .notRegularFile(let identity, let kind): found = .blocked(identity, .notRegularFile(kind: kind))
                case .unreadable(let reason): found = .blocked(nil, .unreadable(reason: reason))
                case .damaged(_, let reason):
                    throw FileRefusal(
                        description: "\(path) is not a valid property list (\(reason)); it was left unchanged")
                }
            }
            switch found {
            case .values(let read, let identity):
                values = read
                edit.identity = identity
            case .absent(let movedAside):
                edit.backupPath = movedAside?.backupPath
            case .blocked(_, let blockage):
                throw FileRefusal(description: describe(blockage))
            }
            let old = values
            try body(&values)
            if values != old {
                edit.identity = try write(values, removingStaleTemporaryFiles: true)
                edit.isWritten = true
            }
            if holdingVersion {
                edit.held = edit.identity.flatMap { HeldFileVersion(path: path, matching: $0) }
            }
            return edit
        }
    }

    /// What is wrong with a file left in place, in a sentence.
    package func describe(_ blockage: Blockage) -> String {
        switch blockage {
        case .notRegularFile(let kind): "\(path) is \(kind), not a property-list file"
        case .unreadable(let reason): "\(path) could not be read (\(reason))"
        case .unmovable(let reason, let error):
            "\(path) is not a valid property list (\(reason)) and could not be moved aside (\(error))"
        case .keepsChanging: "\(path) keeps changing into something that is not a valid property list"
        }
    }
}
