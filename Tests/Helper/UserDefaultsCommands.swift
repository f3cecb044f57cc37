import Defaults
import Foundation

/// Writes and reads through a `UserDefaults`-backed key, to show values survive a normal exit.
enum UserDefaultsCommands {
    static func key(suite: String) -> Defaults.Key<Int> {
        Defaults.Key<Int>("launchCount", default: 0, suite: UserDefaults(suiteName: suite)!)
    }

    /// `userdefaults-write SUITE VALUE`: sets the key and exits normally without synchronizing.
    static func write(_ arguments: [String]) {
        Defaults[key(suite: arguments[0])] = Int(arguments[1])!
    }

    /// `userdefaults-read SUITE`: prints the key's value.
    static func read(_ arguments: [String]) {
        print(Defaults[key(suite: arguments[0])])
    }
}
