import DefaultsCommandCore
import Foundation

/// A response of the editor, before it is written to a connection.
package struct EditorResponse: Sendable {
    package var status: Int
    package var contentType: String
    package var body: Data
    /// Where a redirect sends the browser.
    package var location: String?

    package init(status: Int = 200, contentType: String, body: Data) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    package static func json(_ value: some Encodable, status: Int = 200) -> EditorResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data(#"{"error":"The answer could not be encoded"}"#.utf8)
        return EditorResponse(status: status, contentType: "application/json; charset=utf-8", body: body)
    }

    package static func failure(_ failure: EditorFailure, entry: EditorEntry? = nil) -> EditorResponse {
        json(FailureBody(error: failure.message, entry: entry), status: failure.status)
    }

    private struct FailureBody: Encodable {
        var error: String
        var entry: EditorEntry?
    }
}

/// Answers the requests the gate let through (``RequestGate``), except the event stream, which
/// the server keeps open: the page, the domain, an explanation, a write, a reset. Nothing here
/// knows of connections: a test asks it directly.
package struct EditorResponder: Sendable {
    package let domain: EditedDomain

    package init(domain: EditedDomain) {
        self.domain = domain
    }

    package struct WriteRequest: Codable, Sendable {
        package var key: String
        package var text: String
        /// For a key the schema does not declare: the type to store (`integer`, `float`, …).
        package var type: String?
        package var expected: String?
        package var force: Bool?
    }

    package struct ResetRequest: Decodable, Sendable {
        package var key: String?
        package var all: Bool?
        /// The fingerprint of the value the page showed (`null`: none); absent: reset whatever is.
        package var expected: String??

        private enum CodingKeys: String, CodingKey {
            case key, all, expected
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            key = try container.decodeIfPresent(String.self, forKey: .key)
            all = try container.decodeIfPresent(Bool.self, forKey: .all)
            // Present and null is "the page showed no value", which a missing field is not.
            if container.contains(.expected) {
                expected = .some(
                    try container.decodeNil(forKey: .expected) ? nil : container.decode(String.self, forKey: .expected))
            }
        }
    }

    private struct EntryBody: Encodable {
        var entry: EditorEntry?
    }

    private struct DomainBody: Encodable {
        var domain: EditedDomain.Snapshot
    }

    private static let page = EditorResponse(
        contentType: "text/html; charset=utf-8", body: Data(EditorPage.html.utf8))
    private static let script = EditorResponse(
        contentType: "text/javascript; charset=utf-8", body: Data(EditorPage.javascript.utf8))
    private static let style = EditorResponse(contentType: "text/css; charset=utf-8", body: Data(EditorPage.css.utf8))

    package func respond(to route: RequestGate.Route, query: String, body: Data) -> EditorResponse {
        do throws(EditorFailure) {
            switch route {
            case .page: return Self.page
            case .script: return Self.script
            case .style: return Self.style
            case .domain:
                return .json(try domain.snapshot())
            case .explain:
                guard let key = Self.parameter("key", in: query) else { throw .badRequest("Which key? ?key=NAME") }
                return .json(try domain.explanation(of: key))
            case .events:
                throw .badRequest("The event stream is served by the server")
            case .write:
                let request = try Self.decode(WriteRequest.self, from: body)
                return answeringConflict(of: request.key) { () throws(EditorFailure) in
                    try domain.write(
                        request.key, text: request.text, type: request.type, expected: request.expected,
                        force: request.force ?? false)
                }
            case .reset:
                let request = try Self.decode(ResetRequest.self, from: body)
                if request.all == true {
                    return .json(DomainBody(domain: try domain.resetAll()))
                }
                guard let key = request.key else { throw .badRequest("Reset which key? {\"key\": NAME}") }
                return answeringConflict(of: key) { () throws(EditorFailure) in
                    try domain.reset(key, expected: request.expected)
                }
            }
        } catch {
            return .failure(error)
        }
    }

    /// The entry `change` leaves, or its failure; a conflict is answered with the key as it is now,
    /// for the page to show before it asks whether to overwrite it.
    private func answeringConflict(
        of key: String, _ change: () throws(EditorFailure) -> EditorEntry?
    ) -> EditorResponse {
        do {
            return .json(EntryBody(entry: try change()))
        } catch {
            return .failure(error, entry: error.status == 409 ? try? domain.entry(key) : nil)
        }
    }

    private static func decode<Request: Decodable>(_ type: Request.Type, from body: Data) throws(EditorFailure)
        -> Request
    {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch {
            throw .badRequest("The request is not the JSON the page sends")
        }
    }

    /// The value of `name` in a query (`key=font%20size`), percent-decoded.
    private static func parameter(_ name: String, in query: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }
}
