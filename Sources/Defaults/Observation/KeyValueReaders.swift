/// Turns a delivered change into the value of one key.
///
/// The decoding closures of the observation APIs are methods of these small `Sendable` values
/// rather than closures written inside generic functions, so that no closure captures the
/// metatype of a `Value` that need not be `Sendable`.
struct KeyValueReader<Value: Defaults.Serializable>: Sendable {
    let key: Defaults.Key<Value>
    let keys: ObservedKeys

    init(_ key: Defaults.Key<Value>) {
        self.key = key
        keys = ObservedKeys([key])
    }

    /// The key's value after the change.
    func newValue(_ change: ObservedChange) -> Value {
        key.value(fromStored: keys.object(of: key, in: change.new))
    }

    /// The change as ``Defaults/KeyChange``.
    func keyChange(_ change: ObservedChange) -> Defaults.KeyChange<Value> {
        let newValue = newValue(change)
        // The initial notification decodes once, so a dynamic default is computed once.
        let oldValue = change.isInitial ? newValue : key.value(fromStored: keys.object(of: key, in: change.old))
        return Defaults.KeyChange(oldValue: oldValue, newValue: newValue, isInitial: change.isInitial)
    }
}

/// Calls a ``Defaults/observe(_:options:handler:)`` handler with each change.
struct KeyChangeHandler<Value: Defaults.Serializable>: Sendable {
    let reader: KeyValueReader<Value>
    let handler: @Sendable (Defaults.KeyChange<Value>) -> Void

    func deliver(_ change: ObservedChange) {
        handler(reader.keyChange(change))
    }
}

/// Turns a delivered change into the values of several keys, as a tuple.
struct KeyValuesReader<each Value: Defaults.Serializable>: Sendable {
    let keys: (repeat Defaults.Key<each Value>)
    let observed: ObservedKeys

    init(_ keys: repeat Defaults.Key<each Value>) {
        var list: [Defaults.Keys] = []
        for key in repeat each keys {
            list.append(key)
        }
        self.keys = (repeat each keys)
        observed = ObservedKeys(list)
    }

    func newValues(_ change: ObservedChange) -> (repeat each Value) {
        (repeat value(of: each keys, in: change))
    }

    private func value<One>(of key: Defaults.Key<One>, in change: ObservedChange) -> One {
        key.value(fromStored: observed.object(of: key, in: change.new))
    }
}
