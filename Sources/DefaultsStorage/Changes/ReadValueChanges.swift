import DefaultsPropertyList

/// What an edit of a suite that resolves its own values (``UserDefaultsSuite``, a suite of the
/// application's own) changed of what a read returns: each key's read value taken before the edit,
/// once however often the edit names it, and compared after. A store-backed suite's store decides
/// it instead, inside its one `apply` (``SuiteStore/apply(_:tellsChanges:)``), and posts it from
/// ``SuiteStore/holdingLocks(_:)``.
struct ReadValueChanges {
    private var before: [String: Any?] = [:]

    /// Takes the read value of each of `keys` in `suite`, before the edit.
    init(of keys: some Sequence<String>, in suite: some DefaultsSuite) {
        for key in keys where before.index(forKey: key) == nil {
            before[key] = .some(suite.object(forKey: key))
        }
    }

    /// The keys whose read value in `suite` is no longer the one taken before, compared as
    /// property-list values (an object that is not one counts as changed).
    func changedKeys(in suite: some DefaultsSuite) -> Set<String> {
        Set(before.compactMap { key, old in PropertyListValue.isEqual(old, suite.object(forKey: key)) ? nil : key })
    }
}

extension DefaultsSuite {
    /// Runs `edit`, which writes `keys`, and posts the keys whose read value it changed, once,
    /// with `origin`: the one decision of what changed, and its delivery, for a suite that
    /// resolves its own values.
    func postingChanges<Result>(
        of keys: some Sequence<String>, origin: SuiteChange.Origin = .thisProcess, _ edit: () -> Result
    ) -> Result {
        let changes = ReadValueChanges(of: keys, in: self)
        let result = edit()
        self.changes.post(SuiteChange(keys: changes.changedKeys(in: self), origin: origin))
        return result
    }
}
