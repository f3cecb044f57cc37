import Foundation

extension Defaults {
    /// The suite keys use when none is given.
    ///
    /// On Apple platforms, `UserDefaults.standard`. On Linux, ``FileSuite/standard``: the file
    /// Foundation's `UserDefaults.standard` uses (`~/.config/<process name>.plist`), stored durably,
    /// shared safely between processes and observable, none of which Foundation does there.
    #if canImport(Darwin)
    public static let standardSuite: any DefaultsSuite = UserDefaultsSuite.standard
    #else
    public static let standardSuite: any DefaultsSuite = FileSuite.standard
    #endif

    /// The name Foundation gives the standard suite of this process: the bundle identifier, or
    /// the process name where there is no bundle.
    public static var standardSuiteName: String { StorageEnvironment.standardSuiteName }
}
