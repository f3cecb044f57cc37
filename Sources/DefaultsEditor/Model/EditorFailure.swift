/// Why the editor did not do what a request asked, with the HTTP status the page is told.
package struct EditorFailure: Error, Equatable, Sendable {
    package var status: Int
    /// One sentence for a person, as the `defaults` command words the same refusal.
    package var message: String

    package init(status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The request is not one the page sends.
    package static func badRequest(_ message: String) -> EditorFailure { EditorFailure(status: 400, message) }
    /// The administrator enforces the key.
    package static func managed(_ message: String) -> EditorFailure { EditorFailure(status: 403, message) }
    /// The user's value changed since the page read it.
    package static func conflict(_ message: String) -> EditorFailure { EditorFailure(status: 409, message) }
    /// The value is not of the key's type or outside its allowed values, or could not be written.
    package static func refused(_ message: String) -> EditorFailure { EditorFailure(status: 422, message) }
}
