import Foundation

/// Encodes a top-level dictionary as an XML property list again and again, re-encoding only the
/// entries whose value changed since the last call: the others are copied from the last document.
///
/// A suite that rewrites its whole file after each change keeps one, so that a flush costs a
/// copy of the unchanged bytes rather than an encoding of every value. The output is byte for
/// byte what ``PropertyList/encodeXML(_:)`` gives for the same dictionary.
///
/// ```swift
/// var encoder = XMLDictionaryEncoder()
/// let first = try encoder.encode(["a": .integer(1), "b": .string("two")])
/// let second = try encoder.encode(["a": .integer(1), "b": .string("three")])   // only "b" is encoded again
/// ```
///
/// It keeps the last document and, per key, the value it was encoded from and where its entry
/// ends: about the file's size again, plus 40 bytes a key.
public struct XMLDictionaryEncoder: Sendable {
    /// The keys of the last document, sorted, with each value and the end of its entry in `document`.
    private var keys: [String] = []
    private var values: [PropertyListValue] = []
    private var entryEnds: [Int] = []
    private var document = Data()
    /// The largest document to make, in bytes: past it, ``encode(_:changedKeys:)`` throws
    /// ``PropertyListError/Kind/tooLarge`` with the size the document would have had, holding no
    /// more than this many bytes while it measures.
    public var sizeLimit = Int.max
    /// Where the first entry starts in `document`.
    private var entriesStart = 0

    public init() {}

    /// The XML property list of `dictionary`, as ``PropertyList/encodeXML(_:)`` writes it.
    ///
    /// - Throws: ``PropertyListError`` for a value nested deeper than
    ///   ``PropertyList/maximumDepth``; the encoder then keeps its last document.
    public mutating func encode(_ dictionary: [String: PropertyListValue]) throws(PropertyListError) -> Data {
        try encode(dictionary, changedKeys: nil)
    }

    /// The XML property list of `dictionary`, encoding again only the entries of `changedKeys`
    /// when they are given, without comparing the other values with the last document's.
    ///
    /// - Parameters:
    ///   - dictionary: The values to encode, by key.
    ///   - changedKeys: Every key whose value may differ from the one it had in the dictionary of
    ///     the last call that returned (more keys are harmless, a missing one makes the document
    ///     wrong); `nil` to compare every value. A caller gives it only when it knows: a suite that
    ///     made every change since its last successful write itself.
    /// - Throws: ``PropertyListError`` for a value nested deeper than
    ///   ``PropertyList/maximumDepth``; the encoder then keeps its last document.
    public mutating func encode(
        _ dictionary: [String: PropertyListValue], changedKeys: Set<String>?
    ) throws(PropertyListError) -> Data {
        guard dictionary.count == keys.count else { return try encodeAll(dictionary) }
        if let changedKeys, let data = try encodeChanged(dictionary, changedKeys: changedKeys) {
            return data
        }
        if let data = try encodeReusing(dictionary) {
            return data
        }
        return try encodeAll(dictionary)
    }

    /// Encodes the entries of `changedKeys` again and copies the others; `nil` when one of them is
    /// not in both `dictionary` and the last document (a key was added or removed), for the other
    /// paths to do.
    private mutating func encodeChanged(
        _ dictionary: [String: PropertyListValue], changedKeys: Set<String>
    ) throws(PropertyListError) -> Data? {
        guard !keys.isEmpty else { return nil }
        var changed: [(index: Int, value: PropertyListValue)] = []
        changed.reserveCapacity(changedKeys.count)
        for key in changedKeys {
            guard let index = index(of: key), let value = dictionary[key] else { return nil }
            changed.append((index, value))
        }
        guard !changed.isEmpty else { return document }
        changed.sort { $0.index < $1.index }
        var writer = XMLWriter(capacity: document.count + 1024, limit: sizeLimit)
        // The new end of each changed entry, in the order of `changed`.
        var changedEnds: [Int] = []
        changedEnds.reserveCapacity(changed.count)
        // The encoder's state changes only once every entry is encoded, so that an error leaves it as it was.
        var failure: PropertyListError?
        document.withUnsafeBytes { old in
            let old = old.bindMemory(to: UInt8.self)
            var copyStart = 0
            for (index, value) in changed {
                let entryStart = index == 0 ? entriesStart : entryEnds[index - 1]
                writer.out.append(UnsafeBufferPointer(rebasing: old[copyStart..<entryStart]))
                do throws(PropertyListError) {
                    try writer.writeEntry(key: keys[index], value: value, indent: 1)
                } catch {
                    failure = error
                    return
                }
                changedEnds.append(writer.out.count)
                copyStart = entryEnds[index]
            }
            writer.out.append(UnsafeBufferPointer(rebasing: old[copyStart..<old.count]))
        }
        if let failure {
            throw failure
        }
        let data = try Self.document(of: writer, limit: sizeLimit)
        // Shift the ends of the entries after each changed one by how much it grew or shrank (the
        // entries before the first are where they were).
        var shift = 0
        var next = 0
        for index in changed[0].index..<entryEnds.count {
            if next < changed.count, changed[next].index == index {
                shift = changedEnds[next] - entryEnds[index]
                entryEnds[index] = changedEnds[next]
                values[index] = changed[next].value
                next += 1
            } else {
                entryEnds[index] += shift
            }
        }
        document = data
        return data
    }

    /// The position of `key` in the sorted keys of the last document.
    private func index(of key: String) -> Int? {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == key ? low : nil
    }

    /// Encodes every entry, and keeps what the next call needs.
    private mutating func encodeAll(_ dictionary: [String: PropertyListValue]) throws(PropertyListError) -> Data {
        let sortedKeys = dictionary.keys.sorted()
        var writer = XMLWriter(capacity: max(document.count + 1024, 16 * 1024), limit: sizeLimit)
        writer.out.append(XMLWriter.header)
        var newValues: [PropertyListValue] = []
        var newEnds: [Int] = []
        newValues.reserveCapacity(sortedKeys.count)
        newEnds.reserveCapacity(sortedKeys.count)
        let start: Int
        if sortedKeys.isEmpty {
            writer.out.append("<dict/>\n")
            start = writer.out.count
        } else {
            writer.out.append("<dict>\n")
            start = writer.out.count
            for key in sortedKeys {
                guard let value = dictionary[key] else { continue }
                try writer.writeEntry(key: key, value: value, indent: 1)
                newValues.append(value)
                newEnds.append(writer.out.count)
            }
            writer.out.append("</dict>\n")
        }
        writer.out.append(XMLWriter.footer)
        let data = try Self.document(of: writer, limit: sizeLimit)
        keys = sortedKeys
        values = newValues
        entryEnds = newEnds
        entriesStart = start
        document = data
        return data
    }

    /// Encodes `dictionary` by copying the entries whose value is unchanged; `nil` when its keys
    /// are not the last document's (a key was added or removed), for ``encodeAll(_:)`` to do.
    private mutating func encodeReusing(_ dictionary: [String: PropertyListValue]) throws(PropertyListError) -> Data? {
        guard !keys.isEmpty, dictionary.count == keys.count else { return nil }
        var writer = XMLWriter(capacity: document.count + 1024, limit: sizeLimit)
        var newValues = values
        var newEnds = entryEnds
        var isChanged = false
        var hasOtherKeys = false
        var failure: PropertyListError?
        document.withUnsafeBytes { old in
            let old = old.bindMemory(to: UInt8.self)
            // The bytes of unchanged entries in a row, copied together when a changed one comes.
            var copyStart = 0
            var copyEnd = entriesStart
            for index in keys.indices {
                guard let value = dictionary[keys[index]] else {
                    hasOtherKeys = true
                    return
                }
                if Self.encodesIdentically(values[index], value) {
                    copyEnd = entryEnds[index]
                    newEnds[index] = writer.out.count + (copyEnd - copyStart)
                    continue
                }
                isChanged = true
                writer.out.append(UnsafeBufferPointer(rebasing: old[copyStart..<copyEnd]))
                do throws(PropertyListError) {
                    try writer.writeEntry(key: keys[index], value: value, indent: 1)
                } catch {
                    failure = error
                    return
                }
                newValues[index] = value
                newEnds[index] = writer.out.count
                copyStart = entryEnds[index]
                copyEnd = copyStart
            }
            // The rest: unchanged entries, then `</dict>` and the footer.
            writer.out.append(UnsafeBufferPointer(rebasing: old[copyStart..<old.count]))
        }
        if let failure {
            throw failure
        }
        guard !hasOtherKeys else { return nil }
        guard isChanged else { return document }
        let data = try Self.document(of: writer, limit: sizeLimit)
        values = newValues
        entryEnds = newEnds
        document = data
        return data
    }

    /// The document `writer` made, unless it passed `limit`.
    private static func document(of writer: consuming XMLWriter, limit: Int) throws(PropertyListError) -> Data {
        guard !writer.out.isOverLimit else {
            var error = PropertyListError(
                kind: .tooLarge,
                message: "the document would take \(writer.out.size) bytes, over the limit of \(limit) bytes")
            error.size = writer.out.size
            throw error
        }
        return writer.out.finishData()
    }

    /// Whether two values have the same XML: equal and of the same kind, and for reals and
    /// dates the same bits (`0.0` and `-0.0` are equal but are written differently).
    static func encodesIdentically(_ lhs: PropertyListValue, _ rhs: PropertyListValue) -> Bool {
        switch (lhs, rhs) {
        case (.real(let a), .real(let b)): a.bitPattern == b.bitPattern
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.array(let a), .array(let b)):
            a.count == b.count && zip(a, b).allSatisfy { encodesIdentically($0, $1) }
        case (.dictionary(let a), .dictionary(let b)):
            a.count == b.count
                && a.allSatisfy { key, value in b[key].map { encodesIdentically(value, $0) } ?? false }
        default: lhs == rhs
        }
    }
}
