import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@ObservableDefault(key)`: turns a stored property of an `@Observable` class into a computed
/// one that reads and writes `Defaults[key]`, reports accesses and mutations to the class's
/// observation registrar, and (through a peer property) forwards changes made anywhere else to it.
///
/// The key path is formed in the getter, in the class's isolation, and handed to the closure: a
/// closure that runs on any thread may not form a key path to a property of an actor-isolated
/// (such as `@MainActor`) class.
///
/// ```swift
/// @ObservableDefault(.volume)
/// @ObservationIgnored
/// var volume: Int
/// ```
///
/// expands to
///
/// ```swift
/// @ObservationIgnored
/// var volume: Int {
///     get {
///         _defaultsObservation_volume.start(observing: .volume, for: self, keyPath: \.volume) { object, keyPath in
///             object.withMutation(keyPath: keyPath) {}
///         }
///         access(keyPath: \.volume)
///         return Defaults[.volume]
///     }
///     set {
///         withMutation(keyPath: \.volume) {
///             Defaults[.volume] = newValue
///         }
///     }
/// }
///
/// private let _defaultsObservation_volume = DefaultsMacros.ObservableDefaultObservation()
/// ```
public struct ObservableDefaultMacro: AccessorMacro, PeerMacro {
    /// The prefix of the peer property that holds the property's observation.
    static let observationPrefix = "_defaultsObservation_"

    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        let property = try ObservedProperty(declaration)
        let key = try keyExpression(of: node)
        let name = property.name
        let observation = observationName(for: name)
        return [
            """
            get {
                \(observation).start(observing: \(key), for: self, keyPath: \\.\(name)) { object, keyPath in
                    object.withMutation(keyPath: keyPath) {
                    }
                }
                access(keyPath: \\.\(name))
                return Defaults[\(key)]
            }
            """,
            """
            set {
                withMutation(keyPath: \\.\(name)) {
                    Defaults[\(key)] = newValue
                }
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        // Errors are reported once, by the accessor role; without a valid property there is no peer.
        guard let property = try? ObservedProperty(declaration), (try? keyExpression(of: node)) != nil else {
            return []
        }
        return [
            """
            private let \(observationName(for: property.name)) = DefaultsMacros.ObservableDefaultObservation()
            """
        ]
    }

    static func observationName(for name: TokenSyntax) -> TokenSyntax {
        "\(raw: observationPrefix)\(raw: name.trimmedDescription)"
    }

    /// The macro's single, unlabeled argument: an expression for a `Defaults.Key`.
    static func keyExpression(of node: AttributeSyntax) throws -> ExprSyntax {
        guard case .argumentList(let arguments) = node.arguments, arguments.count == 1,
            let argument = arguments.first, argument.label == nil
        else {
            throw ObservableDefaultMacroError.needsOneKeyArgument
        }
        return argument.expression.trimmed
    }
}

/// The property `@ObservableDefault` is attached to, checked.
struct ObservedProperty {
    let name: TokenSyntax

    init(_ declaration: some DeclSyntaxProtocol) throws {
        guard let variable = declaration.as(VariableDeclSyntax.self) else {
            throw ObservableDefaultMacroError.notAProperty
        }
        guard variable.bindingSpecifier.tokenKind == .keyword(.var) else {
            throw ObservableDefaultMacroError.notAVar
        }
        if variable.modifiers.contains(where: { [.keyword(.static), .keyword(.class)].contains($0.name.tokenKind) }) {
            throw ObservableDefaultMacroError.staticProperty
        }
        guard variable.bindings.count == 1, let binding = variable.bindings.first,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier
        else {
            throw ObservableDefaultMacroError.notASingleProperty
        }
        guard binding.typeAnnotation != nil else {
            throw ObservableDefaultMacroError.missingType
        }
        guard binding.initializer == nil else {
            throw ObservableDefaultMacroError.hasInitialValue
        }
        guard binding.accessorBlock == nil else {
            throw ObservableDefaultMacroError.hasAccessors
        }
        let isIgnored = variable.attributes.contains { element in
            guard case .attribute(let attribute) = element else { return false }
            return attribute.attributeName.trimmedDescription.hasSuffix("ObservationIgnored")
        }
        guard isIgnored else {
            throw ObservableDefaultMacroError.notObservationIgnored
        }
        name = identifier.trimmed
    }
}

/// Why `@ObservableDefault` cannot expand, as the compiler shows it.
enum ObservableDefaultMacroError: Error, CustomStringConvertible {
    case notAProperty
    case notAVar
    case staticProperty
    case notASingleProperty
    case missingType
    case hasInitialValue
    case hasAccessors
    case notObservationIgnored
    case needsOneKeyArgument

    var description: String {
        switch self {
        case .notAProperty:
            "@ObservableDefault can only be attached to a property"
        case .notAVar:
            "@ObservableDefault must be attached to a 'var', not a 'let'"
        case .staticProperty:
            "@ObservableDefault must be attached to an instance property, not a static one"
        case .notASingleProperty:
            "@ObservableDefault must be attached to a single property ('var name: Type')"
        case .missingType:
            "@ObservableDefault needs the property's type written out ('var name: Type')"
        case .hasInitialValue:
            "@ObservableDefault properties take their default value from the key; remove the initial value"
        case .hasAccessors:
            "@ObservableDefault must be attached to a stored property without accessors"
        case .notObservationIgnored:
            "@ObservableDefault needs @ObservationIgnored on the same property, so that @Observable does not also generate accessors for it"
        case .needsOneKeyArgument:
            "@ObservableDefault takes one argument: the Defaults.Key, as in @ObservableDefault(.volume)"
        }
    }
}
