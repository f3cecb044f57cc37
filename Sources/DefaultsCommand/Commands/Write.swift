import ArgumentParser
import DefaultsCommandCore
import DefaultsPropertyList
import DefaultsSchema
import Foundation

/// `defaults write domain key value` and `defaults write domain '{ … }'`.
struct Write: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a key's value, or replace a whole domain.",
        usage: """
            defaults write <domain> <key> <value>
            defaults write <domain> '{ <key> = <value>; … }'
            """,
        discussion: """
            The value is in property-list syntax unless a type flag comes first.
            Property-list syntax (old-style scalars are strings):
              'hello world'  '(1, 2)'  '{ a = 1; }'  '<integer>5</integer>'
            Type flags:
              -string <text>          -data <hex>          -int, -integer <n>
              -float <n>              -bool, -boolean yes|no|true|false|1|0
              -date '2024-05-06 07:08:09 +0000' or ISO 8601
              -array <value>…         -array-add <value>…
              -dict <key> <value>…    -dict-add <key> <value>…
              (array and dictionary values are bare or typed: -int 5)
            A single argument after the domain replaces the whole domain.
            A key the domain's schema declares (see `defaults keys`) takes a value without a type \
            flag, read as the key's type (`defaults write com.example.app fontSize 14`), and a value \
            of another type, or outside the values the key allows, is refused (exit 1).
            """
    )

    @OptionGroup var selection: DomainSelection

    @Argument(
        parsing: .captureForPassthrough,
        help: ArgumentHelp(
            "The domain (unless -g or --path is given), the key, then the value.", valueName: "domain> <key> <value"),
        completion: .custom(completeDomainNames)
    )
    var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        let usage = "defaults write <domain> <key> <value>"
        let domain = try selection.require(from: &arguments, usage: usage)
        guard let key = arguments.first else {
            throw CommandFailure.usage("Missing key and value", usage)
        }
        let store = DomainStore()
        let schema = Self.schemaForChecking(domain)
        if arguments.count == 1 {
            var values = try ValueParsing.domainValues(key)
            if let schema {
                for (name, value) in values {
                    values[name] =
                        try schema.schema.key(named: name)?.checked(value, in: domain, schemaFile: schema.file)
                        ?? value
                }
            }
            try store.change(domain, replacingDamaged: true) { edit in edit.replaceAll(with: values) }
            return
        }
        // Parsed (and checked against the schema) before the domain is opened: a value that does
        // not parse or fit changes nothing.
        let words = Array(arguments.dropFirst())
        let value: WriteValue
        if let schema, let keySchema = schema.schema.key(named: key) {
            value = try keySchema.writeValue(words, in: domain, schemaFile: schema.file)
        } else {
            value = try ValueParsing.writeValue(words)
        }
        try store.change(domain) { (edit) throws(CommandFailure) in
            switch value {
            case .set(let value):
                edit.set(value, forKey: key)
            case .arrayAdd(let elements):
                guard let existing = edit.values[key] else {
                    edit.set(.array(elements), forKey: key)
                    return
                }
                guard case .array(let array) = existing else {
                    throw CommandFailure(
                        "Value for key \(key) is not an array; cannot append.  Leaving defaults unchanged.")
                }
                edit.set(.array(array + elements), forKey: key)
            case .dictionaryAdd(let entries):
                guard let existing = edit.values[key] else {
                    edit.set(.dictionary(entries), forKey: key)
                    return
                }
                guard case .dictionary(let dictionary) = existing else {
                    throw CommandFailure(
                        "Value for key \(key) is not a dictionary; cannot add.  Leaving defaults unchanged.")
                }
                edit.set(.dictionary(dictionary.merging(entries) { _, new in new }), forKey: key)
            }
        }
    }

    /// The domain's schema, to check writes against; a schema that cannot be read is reported on
    /// standard error and the write goes on unchecked, as for a domain with no schema.
    private static func schemaForChecking(_ domain: Domain) -> SchemaCatalog.Found? {
        do {
            return try SchemaCatalog.schema(of: domain)
        } catch {
            Output.printError("\(error.message); the value is written unchecked")
            return nil
        }
    }
}
