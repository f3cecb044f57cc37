import ArgumentParser
import DefaultsPropertyList

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
        if arguments.count == 1 {
            let values = try ValueParsing.domainValues(key)
            try DomainAdministration.refuseReplacement(with: values, in: domain)
            try store.change(domain, replacingDamaged: true) { edit in edit.replaceAll(with: values) }
            return
        }
        // Parsed before the domain is opened: a value that does not parse changes nothing.
        let value = try ValueParsing.writeValue(Array(arguments.dropFirst()))
        try DomainAdministration.refuseWrite(of: key, in: domain)
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
}
