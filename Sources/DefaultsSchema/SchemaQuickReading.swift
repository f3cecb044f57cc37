import Foundation

// The quick reading of a schema: the values `init(from:)` decodes, built straight from a
// ``SchemaJSON`` tree. Each initializer mirrors its type's `init(from:)` for the documents it
// accepts and returns `nil` for anything else (a wrong type, a missing field, a number that is
// not plainly an integer or a normal float), so that ``DomainSchema/decode(from:)`` hands those
// to `JSONDecoder`, whose verdict and message are the rule. `SchemaDecodingTests` holds the two
// to agreeing.

extension DomainSchema {
    /// The schema in `data` when it is plainly well-formed and of a version this reader knows;
    /// `nil` when `JSONDecoder` must judge it.
    static func quicklyRead(_ data: Data) -> DomainSchema? {
        data.withUnsafeBytes { bytes in
            SchemaJSON.parse(bytes.assumingMemoryBound(to: UInt8.self)).flatMap(DomainSchema.init(quick:))
        }
    }

    init?(quick json: SchemaJSON) {
        guard case .integer(let version)? = json[member: "serializationVersion"]?.integer,
            (0...Self.currentSerializationVersion).contains(version),
            case .string(let domain) = json[member: "domain"], case .array(let keys) = json[member: "keys"]
        else { return nil }
        var keySchemas: [KeySchema] = []
        keySchemas.reserveCapacity(keys.count)
        for key in keys {
            guard let keySchema = KeySchema(quick: key) else { return nil }
            keySchemas.append(keySchema)
        }
        // As decoded: the order of the file, not sorted again.
        self.init(domain: domain, keys: [])
        self.serializationVersion = version
        self.keys = keySchemas
    }
}

extension KeySchema {
    init?(quick json: SchemaJSON) {
        guard case .object(let members) = json else { return nil }
        var name: String?
        var swiftType: String?
        var isDefaultDynamic: Bool?
        var iCloud: Bool?
        var type: StoredType?
        var defaultValue: SchemaValue?
        var description: String?
        var allowedValues: AllowedValues?
        var formerNames: [String]?
        var formerNamesConvertedByProgram: [String]?
        for member in members {
            let value = member.value
            // A member this version does not know is passed over, as the synthesized decoding does.
            switch member.name {
            case "name":
                guard case .string(let string) = value else { return nil }
                name = string
            case "swiftType":
                guard case .string(let string) = value else { return nil }
                swiftType = string
            case "isDefaultDynamic":
                guard case .boolean(let boolean) = value else { return nil }
                isDefaultDynamic = boolean
            case "iCloud":
                guard case .boolean(let boolean) = value else { return nil }
                iCloud = boolean
            case "type":
                if case .null = value { continue }
                guard case .string(let string) = value, let stored = StoredType(rawValue: string) else { return nil }
                type = stored
            case "defaultValue":
                if case .null = value { continue }
                guard let schemaValue = SchemaValue(quick: value) else { return nil }
                defaultValue = schemaValue
            case "description":
                if case .null = value { continue }
                guard case .string(let string) = value else { return nil }
                description = string
            case "allowedValues":
                if case .null = value { continue }
                guard let allowed = AllowedValues(quick: value) else { return nil }
                allowedValues = allowed
            case "formerNames", "formerNamesConvertedByProgram":
                if case .null = value { continue }
                guard case .array(let elements) = value else { return nil }
                var names: [String] = []
                names.reserveCapacity(elements.count)
                for element in elements {
                    guard case .string(let string) = element else { return nil }
                    names.append(string)
                }
                if member.name == "formerNames" {
                    formerNames = names
                } else {
                    formerNamesConvertedByProgram = names
                }
            default: continue
            }
        }
        guard let name, let swiftType, let isDefaultDynamic, let iCloud else { return nil }
        self.init(
            name: name, type: type, swiftType: swiftType, defaultValue: defaultValue,
            isDefaultDynamic: isDefaultDynamic, description: description, allowedValues: allowedValues,
            iCloud: iCloud, formerNames: formerNames)
        self.formerNamesConvertedByProgram = formerNamesConvertedByProgram
    }
}

extension AllowedValues {
    init?(quick json: SchemaJSON) {
        guard case .object = json else { return nil }
        // `range` first, as `init(from:)` looks; a member that is null counts as absent.
        if let range = json[member: "range"], !range.isNull {
            guard case .object = range, let lowerBound = range[member: "lowerBound"].flatMap(SchemaValue.init(quick:)),
                let upperBound = range[member: "upperBound"].flatMap(SchemaValue.init(quick:))
            else { return nil }
            self = .range(lowerBound: lowerBound, upperBound: upperBound)
        } else if let choices = json[member: "choices"], !choices.isNull {
            guard case .array(let elements) = choices else { return nil }
            var values: [SchemaValue] = []
            values.reserveCapacity(elements.count)
            for element in elements {
                guard let value = SchemaValue(quick: element) else { return nil }
                values.append(value)
            }
            self = .choices(values)
        } else {
            return nil
        }
    }
}

extension SchemaValue {
    init?(quick json: SchemaJSON) {
        guard case .object(let members) = json, members.count == 1, let type = StoredType(rawValue: members[0].name)
        else { return nil }
        let value = members[0].value
        switch type {
        case .string:
            guard case .string(let string) = value else { return nil }
            self = .string(string)
        case .integer:
            guard let integer = value.integer else { return nil }
            self = integer
        case .real:
            if let real = value.real {
                self = .real(real)
            } else {
                guard case .string(let string) = value else { return nil }
                switch string {
                case "nan": self = .real(.nan)
                case "+infinity": self = .real(.infinity)
                case "-infinity": self = .real(-.infinity)
                default: return nil
                }
            }
        case .boolean:
            guard case .boolean(let boolean) = value else { return nil }
            self = .boolean(boolean)
        case .date:
            guard let seconds = value.real else { return nil }
            self = .date(Date(timeIntervalSince1970: seconds))
        case .data:
            guard case .string(let string) = value, let data = Data(base64Encoded: string) else { return nil }
            self = .data(data)
        case .array:
            guard case .array(let elements) = value else { return nil }
            var array: [SchemaValue] = []
            array.reserveCapacity(elements.count)
            for element in elements {
                guard let schemaValue = SchemaValue(quick: element) else { return nil }
                array.append(schemaValue)
            }
            self = .array(array)
        case .dictionary:
            guard case .object(let entries) = value else { return nil }
            var dictionary: [String: SchemaValue] = [:]
            dictionary.reserveCapacity(entries.count)
            for entry in entries {
                guard let schemaValue = SchemaValue(quick: entry.value) else { return nil }
                dictionary[entry.name] = schemaValue
            }
            self = .dictionary(dictionary)
        }
    }
}

extension SchemaJSON {
    var isNull: Bool {
        if case .null = self { true } else { false }
    }

    /// A number written as a plain integer (`-? digits`, no fraction or exponent): an
    /// ``SchemaValue/integer(_:)`` when it fits `Int`, else an ``SchemaValue/unsignedInteger(_:)``
    /// when it fits `UInt64`. Other spellings of integers (`1.0`, `1e2`) are left to `JSONDecoder`.
    var integer: SchemaValue? {
        guard case .number(let text) = self, !text.utf8.contains(where: Self.isFractionOrExponent) else { return nil }
        if let integer = Int(text) { return .integer(integer) }
        return UInt64(text).map(SchemaValue.unsignedInteger)
    }

    /// A number as a `Double` when it is finite and normal, or a zero written without an exponent
    /// (`0`, `-0.0`); a number that overflows or underflows is left to `JSONDecoder`.
    var real: Double? {
        guard case .number(let text) = self, let real = Double(text), real.isFinite else { return nil }
        if real.isNormal { return real }
        guard real == 0, !text.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
            return nil
        }
        return real
    }

    private static func isFractionOrExponent(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    }
}
