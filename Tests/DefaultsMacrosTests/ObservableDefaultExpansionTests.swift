import DefaultsMacrosPlugin
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

private let macros: [String: MacroSpec] = ["ObservableDefault": MacroSpec(type: ObservableDefaultMacro.self)]

/// Runs swift-syntax's expansion check, recording each failure as an issue.
private func expectExpansion(
    _ source: String,
    expandedSource: String,
    diagnostics: [DiagnosticSpec] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source,
        expandedSource: expandedSource,
        diagnostics: diagnostics,
        macroSpecs: macros,
        failureHandler: { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    )
}

@Suite struct ObservableDefaultExpansionTests {
    /// A misuse of the macro and the diagnostic it gets, named on one line in the test report.
    struct Misuse: Sendable, CustomTestStringConvertible {
        var source: String
        var message: String

        init(_ source: String, _ message: String) {
            (self.source, self.message) = (source, message)
        }

        var testDescription: String { source.debugDescription }
    }

    @Test func expandsToAccessorsAndAnObservationPeer() {
        expectExpansion(
            """
            @Observable
            final class PlayerModel {
                @ObservableDefault(.volume)
                @ObservationIgnored
                var volume: Int
            }
            """,
            expandedSource: #"""
                @Observable
                final class PlayerModel {
                    @ObservationIgnored
                    var volume: Int {
                        get {
                            _defaultsObservation_volume.start(observing: .volume, for: self, keyPath: \.volume) { object, keyPath in
                                object.withMutation(keyPath: keyPath) {
                                }
                            }
                            access(keyPath: \.volume)
                            return Defaults[.volume]
                        }
                        set {
                            withMutation(keyPath: \.volume) {
                                Defaults[.volume] = newValue
                            }
                        }
                    }

                    private let _defaultsObservation_volume = DefaultsMacros.ObservableDefaultObservation()
                }
                """#
        )
    }

    @Test func keepsAnyKeyExpression() {
        expectExpansion(
            """
            @ObservableDefault(Defaults.Keys.name)
            @ObservationIgnored
            private var name: String?
            """,
            expandedSource: #"""
                @ObservationIgnored
                private var name: String? {
                    get {
                        _defaultsObservation_name.start(observing: Defaults.Keys.name, for: self, keyPath: \.name) { object, keyPath in
                            object.withMutation(keyPath: keyPath) {
                            }
                        }
                        access(keyPath: \.name)
                        return Defaults[Defaults.Keys.name]
                    }
                    set {
                        withMutation(keyPath: \.name) {
                            Defaults[Defaults.Keys.name] = newValue
                        }
                    }
                }

                private let _defaultsObservation_name = DefaultsMacros.ObservableDefaultObservation()
                """#
        )
    }

    @Test(
        arguments: [Misuse]([
            Misuse(
                "@ObservableDefault(.volume)\nvar volume: Int",
                "@ObservableDefault needs @ObservationIgnored on the same property, so that @Observable does not also generate accessors for it"
            ),
            Misuse(
                "@ObservableDefault(.volume)\n@ObservationIgnored\nlet volume: Int",
                "@ObservableDefault must be attached to a 'var', not a 'let'"
            ),
            Misuse(
                "@ObservableDefault(.volume)\n@ObservationIgnored\nvar volume: Int = 3",
                "@ObservableDefault properties take their default value from the key; remove the initial value"
            ),
            Misuse(
                "@ObservableDefault(.volume)\n@ObservationIgnored\nvar volume",
                "@ObservableDefault needs the property's type written out ('var name: Type')"
            ),
            Misuse(
                "@ObservableDefault(.volume)\n@ObservationIgnored\nstatic var volume: Int",
                "@ObservableDefault must be attached to an instance property, not a static one"
            ),
            Misuse(
                "@ObservableDefault(key: .volume)\n@ObservationIgnored\nvar volume: Int",
                "@ObservableDefault takes one argument: the Defaults.Key, as in @ObservableDefault(.volume)"
            ),
        ]))
    func reportsMisuse(_ misuse: Misuse) {
        let (source, message) = (misuse.source, misuse.message)
        let lines = source.split(separator: "\n")
        expectExpansion(
            source,
            expandedSource: lines.dropFirst().joined(separator: "\n"),
            diagnostics: [DiagnosticSpec(message: message, line: 1, column: 1)]
        )
    }
}
