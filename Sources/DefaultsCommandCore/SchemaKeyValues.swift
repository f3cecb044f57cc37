import DefaultsPropertyList
import DefaultsSchema

/// The values programs read from a domain (user's file and administrator's layers resolved).
package struct SchemaKeyValues {
    private let values: [String: PropertyListValue]

    /// - Parameter schema: The domain's schema, by which an administrator's value its key does
    ///   not read is passed over.
    package init(_ domain: Domain, schema: DomainSchema) throws(CommandFailure) {
        let user = try DomainStore().read(domain) ?? [:]
        values = DomainAdministration.resolution(of: domain, schema: schema).resolvedValues(user: user)
    }

    package func current(_ key: String) -> PropertyListValue? {
        values[key]
    }
}
