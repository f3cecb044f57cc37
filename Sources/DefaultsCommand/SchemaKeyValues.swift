import DefaultsPropertyList

/// The values programs read from a domain (user's file and administrator's layers resolved).
struct SchemaKeyValues {
    private let values: [String: PropertyListValue]

    init(_ domain: Domain) throws(CommandFailure) {
        values = DomainAdministration.effectiveValues(of: domain, user: try DomainStore().read(domain) ?? [:])
    }

    func current(_ key: String) -> PropertyListValue? {
        values[key]
    }
}
