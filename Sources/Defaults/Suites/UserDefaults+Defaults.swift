import Foundation

extension UserDefaults {
    /// Reads or writes a typed key in this `UserDefaults` object.
    ///
    /// ```swift
    /// UserDefaults.standard[.isUnicorn]
    /// ```
    public subscript<Value: Defaults.Serializable>(key: Defaults.Key<Value>) -> Value {
        get { UserDefaultsSuite.shared(self)[key] }
        set { UserDefaultsSuite.shared(self)[key] = newValue }
    }
}
