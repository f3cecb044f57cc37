import Foundation

/// Converting Foundation-style values into the module's value model, and comparing values.
enum ValueNormalizer {
    static func normalize(_ value: Any, depth: Int) throws(PropertyListError) -> Any {
        switch PropertyListValue.classify(value) {
        case .string(let v): return v
        case .int(let v): return v
        case .uint(let v): return v
        case .double(let v): return v
        case .bool(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .array(let array):
            try checkDepth(depth)
            var result: [Any] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                do {
                    result.append(try normalize(element, depth: depth + 1))
                } catch {
                    throw error.prependingKeyPath("[\(index)]")
                }
            }
            return result
        case .dictionary(let dictionary):
            try checkDepth(depth)
            return try normalizeEntries(
                dictionary.lazy.map { (key: $0.key, value: $0.value) }, count: dictionary.count, depth: depth)
        case .hashableDictionary(let dictionary):
            try checkDepth(depth)
            let entries = try PropertyListValue.stringKeyed(dictionary)
            return try normalizeEntries(entries, count: entries.count, depth: depth)
        case .null:
            throw PropertyListError(
                kind: .unsupportedValue, message: "nil has no property-list representation", keyPath: "")
        case .unsupported(let type):
            throw PropertyListError(
                kind: .unsupportedValue, message: PropertyListValue.unsupportedMessage(type), keyPath: "")
        }
    }

    private static func normalizeEntries(
        _ entries: some Sequence<(key: String, value: Any)>,
        count: Int,
        depth: Int
    ) throws(PropertyListError) -> [String: Any] {
        var result: [String: Any] = [:]
        result.reserveCapacity(count)
        for (key, value) in entries {
            do {
                result[key] = try normalize(value, depth: depth + 1)
            } catch {
                throw error.prependingKeyPath(PropertyListValue.keyComponent(key))
            }
        }
        return result
    }

    private static func checkDepth(_ depth: Int) throws(PropertyListError) {
        if depth >= PropertyList.maximumDepth {
            throw PropertyListError(
                kind: .tooDeep, message: "containers are nested deeper than \(PropertyList.maximumDepth) levels",
                keyPath: "")
        }
    }

    static func isEqual(_ lhs: Any, _ rhs: Any, depth: Int) -> Bool {
        guard depth <= PropertyList.maximumDepth else { return false }
        switch (PropertyListValue.classify(lhs), PropertyListValue.classify(rhs)) {
        case (.string(let a), .string(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.uint(let a), .uint(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.bool(let a), .bool(let b)): return a == b
        case (.date(let a), .date(let b)):
            let x = a.timeIntervalSinceReferenceDate
            let y = b.timeIntervalSinceReferenceDate
            return x == y || (x.isNaN && y.isNaN)
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { isEqual($0, $1, depth: depth + 1) }
        case (let a, let b):
            guard let x = entries(a), let y = entries(b), x.count == y.count else { return false }
            return x.allSatisfy { key, value in
                guard let other = y[key] else { return false }
                return isEqual(value, other, depth: depth + 1)
            }
        }
    }

    private static func entries(_ value: PropertyListValue) -> [String: Any]? {
        switch value {
        case .dictionary(let dictionary):
            return dictionary
        case .hashableDictionary(let dictionary):
            guard let entries = try? PropertyListValue.stringKeyed(dictionary) else { return nil }
            return Dictionary(entries, uniquingKeysWith: { _, last in last })
        default:
            return nil
        }
    }
}
