import DefaultsPropertyList
import DefaultsSchema
import Foundation

extension KeySchema {
    /// The value the words of `defaults write domain key …` give this key: a single bare word read as
    /// the key's type, or typed by a flag as always; either way checked against the key's type and
    /// allowed values.
    package func writeValue(_ words: [String], in domain: Domain, schemaFile: URL) throws(CommandFailure) -> WriteValue
    {
        // A word shaped like a flag (`-int`, or a mistyped `-interger`) is a flag; `-5` is a value.
        let isFlag = words.first.map { $0.dropFirst().first?.isLetter == true && $0.hasPrefix("-") } ?? false
        if words.count == 1, let word = words.first, !isFlag {
            return .set(try untypedValue(word, in: domain, schemaFile: schemaFile))
        }
        let value = try ValueParsing.writeValue(words)
        switch value {
        case .set(let value):
            return .set(try checked(value, in: domain, schemaFile: schemaFile))
        case .arrayAdd, .dictionaryAdd:
            let added: StoredType = if case .arrayAdd = value { .array } else { .dictionary }
            if let type, type != added {
                throw CommandFailure(
                    "Refused to write \(name) of \(domain.displayName): \(name) is \(type.withArticle) "
                        + "(\(swiftType)), and \(words[0]) adds to \(added.withArticle) "
                        + "(schema \(schemaFile.path)). Nothing was written.")
            }
            return value
        }
    }

    /// The value `text` stands for written without a type flag to this key (``parseUntyped(_:)``),
    /// checked against the key's type and allowed values: what `defaults write domain key text`
    /// and the settings editor write.
    package func untypedValue(_ text: String, in domain: Domain, schemaFile: URL) throws(CommandFailure)
        -> PropertyListValue
    {
        guard let value = parseUntyped(text) else {
            throw .notOfType(
                text, key: name, in: domain, expected: type, details: swiftType, source: "schema \(schemaFile.path)")
        }
        return try checked(value, in: domain, schemaFile: schemaFile)
    }
}
