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

    /// Removes every value stored in this `UserDefaults` object, as Defaults' `removeAll()` does.
    /// Registered defaults and launch arguments stay; observers of its keys are told.
    ///
    /// ```swift
    /// UserDefaults(suiteName: "com.example.tests")?.removeAll()
    /// ```
    public func removeAll() {
        UserDefaultsSuite.shared(self).removeAll()
    }
}
