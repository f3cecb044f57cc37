import PackagePlugin

/// Adds to a target a file that makes `Defaults.exportSchema()`, called in that target, list every
/// key the target declares, used yet or not (Swift has no reflection of static properties, so the
/// keys are found in the sources, by `DefaultsKeyFinder`, at each build).
@main
struct DefaultsSchemaPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let sources = target.sourceFiles(withSuffix: "swift").map(\.url)
        let output = context.pluginWorkDirectoryURL.appending(path: "DefaultsDeclaredKeys.swift")
        return [
            .buildCommand(
                displayName: "Finding the Defaults keys of \(target.name)",
                executable: try context.tool(named: "DefaultsKeyFinder").url,
                arguments: [output.path] + sources.map(\.path),
                inputFiles: sources,
                outputFiles: [output]
            )
        ]
    }
}
