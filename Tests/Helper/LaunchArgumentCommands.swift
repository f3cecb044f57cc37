import Defaults
import Foundation

/// Commands that read keys given as launch arguments (`Defaults.LaunchArguments`).
enum LaunchArgumentCommands {
    struct Profile: Codable, Defaults.Serializable {
        var name: String
        var level: Int
    }

    /// The keys the test overrides, in `suite`.
    struct Keys {
        let count: Defaults.Key<Int>
        let greeting: Defaults.Key<String>
        let profile: Defaults.Key<Profile>
        let scores: Defaults.Key<[String: [Int]]>
        let nickname: Defaults.Key<String?>

        init(suite: any DefaultsSuite) {
            count = Defaults.Key("count", default: 0, suite: suite)
            greeting = Defaults.Key("greeting", default: "", suite: suite)
            profile = Defaults.Key("profile", default: Profile(name: "", level: 0), suite: suite)
            scores = Defaults.Key("scores", default: [:], suite: suite)
            nickname = Defaults.Key("nickname", suite: suite)
        }

        /// One line per key: `name=value`.
        func describe() -> [String] {
            let scores = Defaults[scores].keys.sorted().map { "\($0):\(Defaults[self.scores][$0] ?? [])" }
            return [
                "count=\(Defaults[count])",
                "greeting=\(Defaults[greeting].debugDescription)",
                "profile=\(Defaults[profile].name)|\(Defaults[profile].level)",
                "scores=\(scores.joined(separator: ";"))",
                "nickname=\(Defaults[nickname] ?? "nil")",
            ]
        }
    }

    /// `launch-arguments-read DIR NAME [-key value …]`: prints what the keys read in the file
    /// suite NAME in DIR, which takes the process's launch arguments, prefixed `file.`; then what
    /// they read through Foundation's `UserDefaults(suiteName: NAME)` (whose file is the same when
    /// `XDG_CONFIG_HOME` is DIR), prefixed `userdefaults.`.
    static func read(_ arguments: [String]) {
        let suite = FileSuite(name: arguments[1], directory: URL(fileURLWithPath: arguments[0], isDirectory: true))
        var lines = Keys(suite: suite).describe().map { "file.\($0)" }
        if let userDefaults = UserDefaultsSuite.named(arguments[1]) {
            lines += Keys(suite: userDefaults).describe().map { "userdefaults.\($0)" }
        }
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
