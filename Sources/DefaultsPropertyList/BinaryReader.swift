import Foundation

/// Reads binary property lists (`bplist00`).
///
/// Every offset, count and reference is checked against the input before it
/// is used, a reference back to an object that is still being decoded is a
/// cycle, and the decoded size is capped relative to the input, so that shared
/// references cannot expand a small file into a huge tree for whoever walks it.
/// The decoded size counts what the tree takes in memory: every slot of an array
/// or dictionary (charged before it is allocated, so a bomb is refused before it
/// takes any memory), and the bytes of every string and data, counted again at
/// each reference. In memory, an object referenced many times is decoded once
/// where that matters: long strings and data and containers share storage
/// (copy-on-write), and a one-byte reference to a shared `true` costs one slot.
struct BinaryReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let offsetTableStart: Int
    /// Objects end where the offset table starts.
    private let objectsEnd: Int
    /// Marks objects on the current decoding path, to reject cycles.
    private var inProgress: [Bool]
    private var depth = 0
    /// How many more bytes of decoded values may be produced before the input counts as a
    /// decompression bomb.
    private var budget: Int
    /// What one value takes in an array: the slot it fills.
    private static let valueCost = MemoryLayout<PropertyListValue>.stride
    /// What one entry takes in a dictionary: its key and value slots, at the table's largest load
    /// factor (3/4).
    private static let entryCost = (MemoryLayout<String>.stride + MemoryLayout<PropertyListValue>.stride) * 4 / 3
    /// What a string or data that does not fit inline takes beyond its bytes (its allocation's header).
    private static let heapCost = 32
    /// The budget for a file of `size` bytes: the decoded tree of a file at the limit, with the
    /// file's own bytes and the program around them, fits in 16 times the file and 32 MB.
    static func budget(forFileOf size: Int) -> Int { size * 14 + (1 << 20) }
    /// Long strings and data already decoded, by object index, so that a
    /// hostile file referencing one huge string many times costs one copy.
    private var sharedScalars: [Int: PropertyListValue] = [:]
    private static let sharedScalarMinimumLength = 64
    /// Arrays and dictionaries already decoded, by object index, with what decoding them cost the
    /// budget (charged again at each further reference).
    private var sharedContainers: [Int: (value: PropertyListValue, cost: Int)] = [:]

    private static let magic: [UInt8] = Array("bplist00".utf8)
    private static let trailerSize = 32

    static func isBinary(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count >= 8 && magic.indices.allSatisfy { bytes[$0] == magic[$0] }
    }

    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(PropertyListError) -> PropertyListValue {
        guard isBinary(bytes) else {
            throw PropertyListError(
                kind: .syntax, message: "not a binary property list (no bplist00 header)", offset: 0)
        }
        var reader = try BinaryReader(bytes)
        let topField = bytes.count - trailerSize + 16
        let top = bigEndian(bytes, at: topField, size: 8)
        guard top < UInt64(reader.objectCount) else {
            throw PropertyListError(kind: .corrupt, message: "the top object \(top) is out of range", offset: topField)
        }
        return try reader.object(Int(top))
    }

    private init(_ bytes: UnsafeBufferPointer<UInt8>) throws(PropertyListError) {
        self.bytes = bytes
        let minimum = 8 + 1 + BinaryReader.trailerSize
        guard bytes.count >= minimum else {
            throw PropertyListError(
                kind: .truncated, message: "a binary property list needs at least \(minimum) bytes", offset: bytes.count
            )
        }
        let trailer = bytes.count - BinaryReader.trailerSize
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw PropertyListError(
                kind: .corrupt,
                message: "invalid offset size \(offsetSize) or reference size \(referenceSize) in the trailer",
                offset: trailer + 6)
        }
        let count = BinaryReader.bigEndian(bytes, at: trailer + 8, size: 8)
        let tableStart = BinaryReader.bigEndian(bytes, at: trailer + 24, size: 8)
        // The offset table lies between the header and the trailer; checking it in
        // UInt64 first keeps the multiplications below from overflowing.
        guard count >= 1, count <= UInt64(trailer), tableStart >= 9, tableStart < UInt64(trailer),
            count * UInt64(offsetSize) <= UInt64(trailer) - tableStart
        else {
            throw PropertyListError(
                kind: .corrupt,
                message: "the trailer's object count \(count) or offset table position \(tableStart) is out of range",
                offset: trailer + 8)
        }
        objectCount = Int(count)
        offsetTableStart = Int(tableStart)
        objectsEnd = Int(tableStart)
        inProgress = [Bool](repeating: false, count: objectCount)
        // A plain tree spends at least one byte of the file per value and one per string byte;
        // allow generous sharing beyond that, and room for small files.
        budget = Self.budget(forFileOf: bytes.count)
    }

    @inline(__always)
    private static func bigEndian(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    // MARK: - Objects

    /// The value of object `index`; its slot is charged by the container that holds it.
    private mutating func object(_ index: Int) throws(PropertyListError) -> PropertyListValue {
        let entry = offsetTableStart + index * offsetSize
        let offset64 = BinaryReader.bigEndian(bytes, at: entry, size: offsetSize)
        guard offset64 >= 8, offset64 < UInt64(objectsEnd) else {
            throw PropertyListError(
                kind: .corrupt, message: "object \(index) has an out-of-range offset \(offset64)", offset: entry)
        }
        let offset = Int(offset64)
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .boolean(false)
            case 0x09: return .boolean(true)
            case 0x00: throw corrupt("a null object has no property-list representation", offset)
            case 0x0F: throw corrupt("a fill byte is not a value", offset)
            default: throw corrupt("unknown object marker 0x\(String(marker, radix: 16))", offset)
            }
        case 0x1:
            return try integer(at: offset + 1, sizeLog2: low, markerOffset: offset)
        case 0x2:
            guard low == 2 || low == 3 else { throw corrupt("a real of \(1 << low) bytes", offset) }
            let size = 1 << low
            try require(offset + 1, size, offset)
            let raw = BinaryReader.bigEndian(bytes, at: offset + 1, size: size)
            return .real(
                low == 2 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))) : Double(bitPattern: raw))
        case 0x3:
            guard marker == 0x33 else { throw corrupt("unknown object marker 0x\(String(marker, radix: 16))", offset) }
            try require(offset + 1, 8, offset)
            return .date(
                Date(
                    timeIntervalSinceReferenceDate: Double(
                        bitPattern: BinaryReader.bigEndian(bytes, at: offset + 1, size: 8))))
        case 0x4, 0x5, 0x6:
            let (count, start) = try lengthAndStart(offset, low)
            let byteCount = marker >> 4 == 0x6 ? count * 2 : count
            guard count <= objectsEnd - start, byteCount <= objectsEnd - start else {
                throw corrupt("a string or data object runs past the object area", offset)
            }
            // Charged at every reference: each one is a copy in what the caller builds from it.
            try charge(byteCount + (byteCount > 15 ? BinaryReader.heapCost : 0))
            if byteCount < BinaryReader.sharedScalarMinimumLength {
                return try scalar(marker, start, count, offset)
            }
            if let shared = sharedScalars[index] { return shared }
            let value = try scalar(marker, start, count, offset)
            sharedScalars[index] = value
            return value
        case 0xA, 0xD:
            if let shared = sharedContainers[index] {
                try charge(shared.cost)
                return shared.value
            }
            let budgetBefore = budget
            let (count, start) = try lengthAndStart(offset, low)
            let value: PropertyListValue =
                marker >> 4 == 0xA
                ? .array(try array(objectIndex: index, offset: offset, count: count, start: start))
                : .dictionary(try dictionary(objectIndex: index, offset: offset, count: count, start: start))
            if count > 0 {
                sharedContainers[index] = (value, budgetBefore - budget)
            }
            return value
        case 0x8:
            throw corrupt("a UID (keyed-archiver reference) has no property-list representation", offset)
        case 0xC:
            throw corrupt("a set has no property-list representation", offset)
        default:
            throw corrupt("unknown object marker 0x\(String(marker, radix: 16))", offset)
        }
    }

    private mutating func array(objectIndex: Int, offset: Int, count: Int, start: Int) throws(PropertyListError)
        -> [PropertyListValue]
    {
        guard count <= (objectsEnd - start) / referenceSize else {
            throw corrupt("an array's references run past the object area", offset)
        }
        try charge(count * BinaryReader.valueCost)
        try enter(objectIndex, offset)
        defer { leave(objectIndex) }
        var array: [PropertyListValue] = []
        array.reserveCapacity(count)
        for position in 0..<count {
            array.append(try object(try reference(at: start + position * referenceSize, offset)))
        }
        return array
    }

    private mutating func dictionary(
        objectIndex: Int, offset: Int, count: Int, start: Int
    ) throws(PropertyListError) -> [String: PropertyListValue] {
        guard count <= (objectsEnd - start) / referenceSize / 2 else {
            throw corrupt("a dictionary's references run past the object area", offset)
        }
        try charge(count * BinaryReader.entryCost)
        try enter(objectIndex, offset)
        defer { leave(objectIndex) }
        var dictionary: [String: PropertyListValue] = [:]
        dictionary.reserveCapacity(count)
        let valuesStart = start + count * referenceSize
        for position in 0..<count {
            let keyReference = try reference(at: start + position * referenceSize, offset)
            guard case .string(let key) = try object(keyReference) else {
                throw corrupt("a dictionary key is not a string", offset)
            }
            dictionary[key] = try object(try reference(at: valuesStart + position * referenceSize, offset))
        }
        return dictionary
    }

    /// Takes `cost` from the decoded-size budget; fails once the values would be far larger than the input.
    private mutating func charge(_ cost: Int) throws(PropertyListError) {
        budget -= cost
        guard budget >= 0 else {
            throw PropertyListError(
                kind: .corrupt,
                message: "shared references expand to far more than the \(bytes.count) bytes of the file",
                offset: nil)
        }
    }

    private mutating func enter(_ objectIndex: Int, _ offset: Int) throws(PropertyListError) {
        guard !inProgress[objectIndex] else { throw corrupt("object \(objectIndex) contains itself", offset) }
        depth += 1
        guard depth <= PropertyList.maximumDepth else {
            throw PropertyListError(
                kind: .tooDeep, message: "containers are nested deeper than \(PropertyList.maximumDepth) levels",
                offset: offset)
        }
        inProgress[objectIndex] = true
    }

    private mutating func leave(_ objectIndex: Int) {
        inProgress[objectIndex] = false
        depth -= 1
    }

    private func reference(at position: Int, _ containerOffset: Int) throws(PropertyListError) -> Int {
        let value = BinaryReader.bigEndian(bytes, at: position, size: referenceSize)
        guard value < UInt64(objectCount) else {
            throw corrupt("a reference to object \(value) of \(objectCount)", containerOffset)
        }
        return Int(value)
    }

    // MARK: - Scalars

    private func integer(at start: Int, sizeLog2: Int, markerOffset: Int) throws(PropertyListError)
        -> PropertyListValue
    {
        guard sizeLog2 <= 4 else { throw corrupt("an integer of \(1 << sizeLog2) bytes", markerOffset) }
        let size = 1 << sizeLog2
        try require(start, size, markerOffset)
        switch size {
        case 16:
            // Written for values above Int64.max (high word 0) and, by some writers, for negatives (high word all ones).
            let high = BinaryReader.bigEndian(bytes, at: start, size: 8)
            let low = BinaryReader.bigEndian(bytes, at: start + 8, size: 8)
            if high == 0 { return low <= UInt64(Int.max) ? .integer(Int(low)) : .unsignedInteger(low) }
            if high == UInt64.max, low > UInt64(Int.max) { return .integer(Int(bitPattern: UInt(low))) }
            throw PropertyListError(
                kind: .outOfRange, message: "a 128-bit integer does not fit in 64 bits", offset: markerOffset)
        case 8:
            return .integer(Int(bitPattern: UInt(BinaryReader.bigEndian(bytes, at: start, size: 8))))
        default:
            // 1, 2 and 4-byte integers are unsigned.
            return .integer(Int(BinaryReader.bigEndian(bytes, at: start, size: size)))
        }
    }

    /// The element count of a string, data or collection (inline, or an integer object after the marker) and where its content starts.
    private func lengthAndStart(_ offset: Int, _ low: Int) throws(PropertyListError) -> (Int, Int) {
        if low != 0x0F { return (low, offset + 1) }
        try require(offset + 1, 1, offset)
        let intMarker = bytes[offset + 1]
        guard intMarker >> 4 == 0x1, intMarker & 0x0F <= 3 else {
            throw corrupt("invalid length after an object marker", offset)
        }
        let size = 1 << Int(intMarker & 0x0F)
        try require(offset + 2, size, offset)
        let count = BinaryReader.bigEndian(bytes, at: offset + 2, size: size)
        guard count <= UInt64(objectsEnd) else {
            throw corrupt("a length of \(count) runs past the object area", offset)
        }
        return (Int(count), offset + 2 + size)
    }

    /// Checks that `count` bytes from `start` lie inside the object area.
    @inline(__always)
    private func require(_ start: Int, _ count: Int, _ markerOffset: Int) throws(PropertyListError) {
        guard start <= objectsEnd, count <= objectsEnd - start else {
            throw PropertyListError(
                kind: .corrupt, message: "an object runs past the object area", offset: markerOffset)
        }
    }

    /// Data (0x4), an ASCII string (0x5, read as UTF-8 to be lenient) or a UTF-16BE string (0x6),
    /// already bounds-checked. Text that is not valid UTF-8 or UTF-16 is refused rather than repaired,
    /// so that a rewrite never replaces the original bytes with U+FFFD.
    private func scalar(_ marker: UInt8, _ start: Int, _ count: Int, _ offset: Int) throws(PropertyListError)
        -> PropertyListValue
    {
        switch marker >> 4 {
        case 0x4:
            return .data(Data(UnsafeBufferPointer(rebasing: bytes[start..<(start + count)])))
        case 0x5:
            let text = UnsafeBufferPointer(rebasing: bytes[start..<(start + count)])
            guard let string = String(validating: text, as: UTF8.self) else {
                throw corrupt("a string is not valid UTF-8", offset)
            }
            return .string(string)
        default:
            var units = [UInt16](repeating: 0, count: count)
            for index in 0..<count {
                units[index] = UInt16(bytes[start + 2 * index]) << 8 | UInt16(bytes[start + 2 * index + 1])
            }
            guard let string = String(validating: units, as: UTF16.self) else {
                throw corrupt("a string is not valid UTF-16", offset)
            }
            return .string(string)
        }
    }

    private func corrupt(_ message: String, _ offset: Int) -> PropertyListError {
        PropertyListError(kind: .corrupt, message: message, offset: offset)
    }
}
