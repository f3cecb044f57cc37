// An application's target with `DefaultsSchemaPlugin` applied (see ../../Package.swift): its one
// line `try Defaults.exportSchema()` lists every key the target declares, the one this version
// never reads among them, with no list of keys kept by hand.
//
//     swift run --package-path Examples schema-plugin-example
//     swift run defaults keys schema-plugin-example    # volume and showsToolbar
import Defaults
import Foundation

extension Defaults.Keys {
    static let volume = Key<Int>("volume", default: 5, description: "The sound's volume.", range: 0...10)
    /// Not read by this version of the program: the plugin finds it in the sources all the same.
    static let showsToolbar = Key<Bool>(
        "showsToolbar", default: true, description: "Whether the window shows its toolbar.")
}

print("volume: \(Defaults[.volume])")
do {
    print("schema: \(try Defaults.exportSchema().path)")
} catch {
    print("The settings' schema was not exported: \(error)")
    exit(1)
}
