import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides the macros of the `DefaultsMacros` module.
@main
struct DefaultsMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [ObservableDefaultMacro.self]
}
