// A small program that keeps its settings with Defaults: run it twice and the launch count goes up.
//
//     swift run defaults-example
//     swift run defaults-example -theme '"dark"'    # a launch-argument override, never stored
//     swift run defaults keys defaults-example      # its keys, from the schema it exports
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
    static let launchCount = Key<Int>(
        "launchCount", default: 0, description: "How many times the program has started.")
    static let lastLaunch = Key<Date?>("lastLaunch", description: "When the program last started.")
    static let theme = Key<Theme>(
        "theme", default: .system, description: "The colors of the window.", choices: [.light, .dark, .system])
    static let fontSize = Key<Int>(
        "fontSize", default: 12, description: "The size of the text, in points.", range: 8...72)
    static let window = Key<Window>(
        "window", default: Window(width: 800, height: 600), description: "The window's size, in points.")
    static let recentFiles = Key<[URL]>(
        "recentFiles", default: [], description: "The files opened last, the latest first (three at most).")
    static let showsToolbar = Key<Bool>(
        "showsToolbar", default: true, description: "Whether the window shows its toolbar.")
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
print("  font size:    \(Defaults[.fontSize])")
print("  window:       \(Defaults[.window].width)×\(Defaults[.window].height)")
print("  recent files: \(Defaults[.recentFiles].map(\.path).joined(separator: ", "))")
print("  toolbar:      \(Defaults[.showsToolbar] ? "shown" : "hidden")")

// The schema lists every key used above: `defaults keys`, `describe` and `range` read it, and
// `defaults write` checks values against it. A key not used yet reaches it through
// `DefaultsSchemaPlugin`, applied to an app's target as Examples/ shows.
do {
    try Defaults.exportSchema()
} catch {
    print("The settings' schema was not exported: \(error)")
}
