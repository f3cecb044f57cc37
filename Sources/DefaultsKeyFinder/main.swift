// `DefaultsKeyFinder OUTPUT SOURCE…`: writes to OUTPUT a Swift file that makes
// `Defaults.exportSchema()`, in the module of the sources, create every key they declare before
// it exports the schema (see Plugins/DefaultsSchemaPlugin). Run by the plugin at each build.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: DefaultsKeyFinder OUTPUT SOURCE…\n".utf8))
    exit(2)
}
var paths: [String] = []
for source in arguments.dropFirst() {
    do {
        paths += KeyFinder.keyPaths(in: try String(contentsOfFile: source, encoding: .utf8))
    } catch {
        FileHandle.standardError.write(Data("DefaultsKeyFinder: \(source) could not be read: \(error)\n".utf8))
        exit(1)
    }
}
let generated = DeclaredKeysFile.source(keyPaths: paths)
// Written only when it changes, so that an unchanged list rebuilds nothing.
if (try? String(contentsOfFile: output, encoding: .utf8)) != generated {
    do {
        try generated.write(toFile: output, atomically: true, encoding: .utf8)
    } catch {
        FileHandle.standardError.write(Data("DefaultsKeyFinder: \(output) could not be written: \(error)\n".utf8))
        exit(1)
    }
}
