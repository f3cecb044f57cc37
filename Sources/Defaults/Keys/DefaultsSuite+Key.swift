extension DefaultsSuite {
    /// Reads or writes the value of a typed key in this suite.
    ///
    /// ```swift
    /// let suite = InMemorySuite()
    /// suite[.isUnicornMode] = true
    /// ```
    public subscript<Value: Defaults.Serializable>(key: Defaults.Key<Value>) -> Value {
        get { key.value(in: self) }
        set { key.store(newValue, in: self) }
    }
}
