import SwiftParser
import SwiftSyntax

/// Finds, in one source file, the keys a program declares where code of its module can name them:
/// the `static let`s of `extension Defaults.Keys` and of the types that conform to
/// `Defaults.KeyGroup`, by the path that names each (`Defaults.Keys.fontSize`,
/// `BookSettings.id`). What cannot be named from another file is left out: a `private` or
/// `fileprivate` key or type, a key of a generic type, a key under `#if` (which may not be
/// compiled) or marked `@available`, a key inside a function, initializer, accessor or closure.
final class KeyFinder: SyntaxVisitor {
    /// The paths found, in the file's order.
    private(set) var paths: [String] = []
    /// The names of the enclosing types and extensions; `nil` for a scope whose keys are left out.
    private var scopes: [Scope] = []

    private struct Scope {
        /// The path of the type or extension (`Defaults.Keys`, `Settings.Appearance`).
        let path: String
        /// Whether its static lets are keys: the keys' extension, or a key group.
        let holdsKeys: Bool
        /// Whether code of another file can name its members.
        let isNameable: Bool
    }

    init() {
        super.init(viewMode: .sourceAccurate)
    }

    static func keyPaths(in source: String) -> [String] {
        let finder = KeyFinder()
        finder.walk(Parser.parse(source: source))
        return finder.paths
    }

    // MARK: Scopes

    override func visit(_ node: ExtensionDeclSyntax) -> SyntaxVisitorContinueKind {
        let path = node.extendedType.trimmedDescription
        let holdsKeys = path == "Defaults.Keys" || Self.conformsToKeyGroup(node.inheritanceClause)
        push(path: path, holdsKeys: holdsKeys, modifiers: node.modifiers, isGeneric: node.genericWhereClause != nil)
        return .visitChildren
    }

    override func visitPost(_ node: ExtensionDeclSyntax) { scopes.removeLast() }

    override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind {
        pushType(node.name, node.inheritanceClause, node.modifiers, isGeneric: node.genericParameterClause != nil)
        return .visitChildren
    }

    override func visitPost(_ node: EnumDeclSyntax) { scopes.removeLast() }

    override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind {
        pushType(node.name, node.inheritanceClause, node.modifiers, isGeneric: node.genericParameterClause != nil)
        return .visitChildren
    }

    override func visitPost(_ node: StructDeclSyntax) { scopes.removeLast() }

    override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind {
        pushType(node.name, node.inheritanceClause, node.modifiers, isGeneric: node.genericParameterClause != nil)
        return .visitChildren
    }

    override func visitPost(_ node: ClassDeclSyntax) { scopes.removeLast() }

    // Keys declared inside functions, closures and protocols cannot be named from outside.
    override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: ProtocolDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: ActorDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: IfConfigDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: InitializerDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: DeinitializerDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: SubscriptDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: AccessorBlockSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
    override func visit(_ node: ClosureExprSyntax) -> SyntaxVisitorContinueKind { .skipChildren }

    // MARK: Keys

    override func visit(_ node: VariableDeclSyntax) -> SyntaxVisitorContinueKind {
        guard let scope = scopes.last, scope.holdsKeys, scope.isNameable,
            node.bindingSpecifier.tokenKind == .keyword(.let),
            node.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) }),
            Self.isNameable(node.modifiers),
            // A key marked `@available` may not be usable where the generated file is compiled.
            !node.attributes.contains(where: {
                $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription == "available"
            })
        else { return .skipChildren }
        for binding in node.bindings {
            guard let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
                Self.declaresKey(binding)
            else { continue }
            paths.append(scope.path + "." + Self.escaped(name))
        }
        return .skipChildren
    }

    // MARK: Rules

    private func pushType(
        _ name: TokenSyntax, _ inheritance: InheritanceClauseSyntax?, _ modifiers: DeclModifierListSyntax,
        isGeneric: Bool
    ) {
        let outer = scopes.last.map { $0.path + "." } ?? ""
        push(
            path: outer + Self.escaped(name.text), holdsKeys: Self.conformsToKeyGroup(inheritance),
            modifiers: modifiers, isGeneric: isGeneric)
    }

    private func push(path: String, holdsKeys: Bool, modifiers: DeclModifierListSyntax, isGeneric: Bool) {
        let isNameable = (scopes.last?.isNameable ?? true) && Self.isNameable(modifiers) && !isGeneric
        scopes.append(Scope(path: path, holdsKeys: holdsKeys, isNameable: isNameable))
    }

    private static func isNameable(_ modifiers: DeclModifierListSyntax) -> Bool {
        !modifiers.contains { [.keyword(.private), .keyword(.fileprivate)].contains($0.name.tokenKind) }
    }

    private static func conformsToKeyGroup(_ clause: InheritanceClauseSyntax?) -> Bool {
        clause?.inheritedTypes.contains {
            let name = $0.type.trimmedDescription
            return name == "Defaults.KeyGroup" || name == "KeyGroup"
        } ?? false
    }

    /// A binding whose type is a key (`Key<Int>`, `Defaults.Key<Int>`), or whose value is made by
    /// a key's initializer (`Key<Int>(…)`, `Defaults.Key<Int>(…)`, `Key(…)`) or by a key
    /// group's `key(…)`.
    private static func declaresKey(_ binding: PatternBindingSyntax) -> Bool {
        if let type = binding.typeAnnotation?.type.trimmedDescription {
            return isKeyType(type)
        }
        guard let call = binding.initializer?.value.as(FunctionCallExprSyntax.self) else { return false }
        let callee = call.calledExpression.trimmedDescription
        return isKeyType(callee) || callee == "key"
    }

    private static func isKeyType(_ text: String) -> Bool {
        let base = text.split(separator: "<", maxSplits: 1).first.map(String.init) ?? text
        return base == "Key" || base == "Defaults.Key"
    }

    /// A name as code must write it: a keyword in backquotes.
    private static func escaped(_ name: String) -> String {
        let keywords: Set<String> = [
            "default", "class", "enum", "struct", "protocol", "extension", "func", "let", "var",
            "import", "in", "is", "as", "self", "Self", "super", "init", "deinit", "subscript", "operator", "return",
            "switch", "case", "if", "else", "for", "while", "repeat", "do", "try", "throw", "throws", "break",
            "continue", "where", "guard", "defer", "true", "false", "nil", "static", "public", "internal", "private",
            "fileprivate", "open", "inout", "associatedtype", "typealias", "catch", "rethrows", "Any", "Type",
        ]
        guard !name.hasPrefix("`"), keywords.contains(name) else { return name }
        return "`\(name)`"
    }
}
