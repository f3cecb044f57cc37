import Foundation

/// Property-list equality of values held as `Any`, without converting them.
extension PropertyListClassification {
    static func isEqual(_ lhs: Any, _ rhs: Any, depth: Int) -> Bool {
        guard depth <= PropertyList.maximumDepth else { return false }
        switch (classify(lhs), classify(rhs)) {
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

    private static func entries(_ value: Self) -> [String: Any]? {
        switch value {
        case .dictionary(let dictionary):
            return dictionary
        case .hashableDictionary(let dictionary):
            guard let entries = try? stringKeyed(dictionary) else { return nil }
            return Dictionary(entries, uniquingKeysWith: { _, last in last })
        default:
            return nil
        }
    }
}
