// A small program that keeps its settings with Defaults: run it twice and the launch count goes up.
//
//     swift run defaults-example
//     swift run defaults-example -theme '"dark"'    # a launch-argument override, never stored
import Defaults
import Foundation

enum Theme: String, Defaults.Serializable {
    case light, dark, system
}

struct Window: Codable, Defaults.Serializable {
    var width: Int
    var height: Int
}

extension Defaults.Keys {
    static let launchCount = Key<Int>("launchCount", default: 0)
    static let lastLaunch = Key<Date?>("lastLaunch")
    static let theme = Key<Theme>("theme", default: .system)
    static let window = Key<Window>("window", default: Window(width: 800, height: 600))
    static let recentFiles = Key<[URL]>("recentFiles", default: [])
}

let previousLaunch = Defaults[.lastLaunch]
Defaults[.launchCount] += 1
Defaults[.lastLaunch] = Date()
Defaults[.recentFiles] = Array(
    ([URL(fileURLWithPath: "/tmp/launch-\(Defaults[.launchCount]).txt")] + Defaults[.recentFiles]).prefix(3))

print("Settings of suite \(Defaults.standardSuite.name):")
print("  launch count: \(Defaults[.launchCount])")
print("  last launch:  \(previousLaunch.map { "\($0)" } ?? "never")")
print("  theme:        \(Defaults[.theme].rawValue)")
print("  window:       \(Defaults[.window].width)×\(Defaults[.window].height)")
print("  recent files: \(Defaults[.recentFiles].map(\.path).joined(separator: ", "))")
