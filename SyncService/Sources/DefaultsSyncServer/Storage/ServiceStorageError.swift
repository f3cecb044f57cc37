/// A database problem, described without credentials.
struct ServiceStorageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
