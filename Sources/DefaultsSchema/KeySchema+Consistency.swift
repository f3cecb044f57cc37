/// Whether a key's schema agrees with itself: its default, range bounds and choices of its own
/// type, its default among its own allowed values, its range holding some value.
///
/// A program's declaration cannot contradict itself this way (its types are checked when it is
/// compiled, and a default outside its allowed values is reported when the key is declared), but
/// a schema is a file that anyone may have edited. What a schema says in contradiction with itself
/// is not what a program does: a program reads the default compiled into it, and checks nothing
/// against a range it never declared.
extension KeySchema {
    /// Why the default does not fit this key (its type, or its allowed values), as
    /// ``problem(with:)`` judges any value; `nil` when it fits or there is no default.
    public var defaultValueProblem: String? {
        defaultValue.flatMap(problem(with:))
    }

    /// How the allowed values contradict the key's type or themselves: a bound or a choice of
    /// another type, bounds with no order between them, or a lower bound above the upper one.
    /// Empty when they agree (or there are none).
    ///
    /// Allowed values that contradict themselves hold no value a program could rely on, so
    /// ``problem(with:)`` judges a value by its type alone then.
    public var allowedValuesProblems: [String] {
        guard let allowedValues else { return [] }
        switch allowedValues {
        case .range(let lowerBound, let upperBound):
            var problems = [("lower bound", lowerBound), ("upper bound", upperBound)].compactMap { part, bound in
                typeMismatch(with: bound).map { "the \(part) of \(name)'s range does not fit it: \($0)" }
            }
            if problems.isEmpty {
                switch SchemaValue.compare(lowerBound, upperBound) {
                case nil:
                    problems.append(
                        "the range of \(name) holds no value: \(lowerBound) and \(upperBound) have no order")
                case .orderedDescending:
                    problems.append("the range of \(name) holds no value: \(lowerBound) is above \(upperBound)")
                default:
                    break
                }
            }
            return problems
        case .choices(let choices):
            return choices.compactMap { choice in
                typeMismatch(with: choice).map { "a choice of \(name) does not fit it: \($0)" }
            }
        }
    }

    /// Every way this key's schema contradicts itself, one sentence each naming the key (see
    /// ``defaultValueProblem`` and ``allowedValuesProblems``); empty when it agrees with itself.
    public var problems: [String] {
        var problems = allowedValuesProblems
        if let defaultValueProblem {
            problems.insert("the default of \(name) does not fit it: \(defaultValueProblem)", at: 0)
        }
        return problems
    }

    /// The allowed values a value is judged against: ``allowedValues`` unless they contradict
    /// the key's type or themselves (``allowedValuesProblems``).
    public var consistentAllowedValues: AllowedValues? {
        allowedValuesProblems.isEmpty ? allowedValues : nil
    }

    /// Why `value` is not of the key's stored type, naming both; `nil` when it is, or the key's
    /// type is unknown.
    func typeMismatch(with value: SchemaValue) -> String? {
        guard let type, !Self.fits(value.storedType, type) else { return nil }
        return "\(name) is \(type.withArticle) (\(swiftType)), and \(value) is \(value.storedType.withArticle)"
    }
}

extension DomainSchema {
    /// Every way the schema's keys contradict themselves (``KeySchema/problems``), key by key;
    /// empty when none does.
    public var problems: [String] {
        keys.flatMap(\.problems)
    }
}
