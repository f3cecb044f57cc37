import DefaultsPropertyList
import DefaultsSchema
import Foundation
import TestSupport
import Testing

/// `defaults edit`'s server over real HTTP on loopback: what the page asks of it, checked by the
/// rules `defaults write` checks by, and the requests another page or program could send.
@Suite("defaults edit: the server", .mayBlock)
struct EditorServerTests {
    static let domain = "com.example.editor"

    static let schema = [
        KeySchema(
            name: "fontSize", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(12),
            description: "The size of text, in points.",
            allowedValues: .range(lowerBound: .integer(8), upperBound: .integer(72))),
        KeySchema(
            name: "theme", type: .string, swiftType: "Swift.String", defaultValue: .string("light"),
            allowedValues: .choices([.string("light"), .string("dark")])),
        KeySchema(name: "locked", type: .boolean, swiftType: "Swift.Bool", defaultValue: .boolean(false)),
    ]

    private func fontSize(_ sandbox: CommandSandbox) throws -> Int? {
        try sandbox.storedValues(Self.domain)["fontSize"] as? Int
    }

    @Test(
        "A value within the key's range is written to the file; one outside it, or of another type, is refused and nothing is written"
    )
    func writesCheckedValues() throws {
        let sandbox = try CommandSandbox()
        let editor = try EditorSession(sandbox, domain: Self.domain, schema: Self.schema)
        let before = try #require(try editor.entry("fontSize"))
        #expect(before["source"] as? String == "default" && before["editText"] as? String == "12")
        #expect(before["fingerprint"] == nil && before["modified"] as? Bool == false)

        let written = try editor.post("api/write", ["key": "fontSize", "text": "16", "expected": NSNull()])
        #expect(written.status == 200, "\(written.text)")
        #expect(try fontSize(sandbox) == 16)
        let entry = try #require(try written.json()["entry"] as? [String: Any])
        #expect(entry["value"] as? String == "16" && entry["source"] as? String == "user")
        let fingerprint = try #require(entry["fingerprint"] as? String)

        for text in ["99", "big", "7"] {
            let refused = try editor.post("api/write", ["key": "fontSize", "text": text, "expected": fingerprint])
            #expect(refused.status == 422)
            let message = try refused.json()["error"] as? String ?? ""
            #expect(message.hasPrefix("Refused to write fontSize of \(Self.domain)"), "\(message)")
            #expect(message.hasSuffix("Nothing was written."))
            #expect(try fontSize(sandbox) == 16)
        }
        // The same refusal, in the same words, as the command's.
        let command = try sandbox.run("write", Self.domain, "fontSize", "99")
        let page = try editor.post("api/write", ["key": "fontSize", "text": "99", "expected": fingerprint])
        #expect(command.error.contains(try page.json()["error"] as? String ?? "?"))

        let choice = try editor.post("api/write", ["key": "theme", "text": "sepia", "expected": NSNull()])
        #expect(choice.status == 422)
        #expect(try sandbox.storedValues(Self.domain)["theme"] == nil)
    }

    @Test("A write based on a value changed since is refused until the person says to overwrite it")
    func changedElsewhereAsksFirst() throws {
        let sandbox = try CommandSandbox()
        let editor = try EditorSession(sandbox, domain: Self.domain, schema: Self.schema)
        let shown = try #require(try editor.entry("fontSize"))
        try sandbox.run("write", Self.domain, "fontSize", "20")
        let stale = try editor.post(
            "api/write", ["key": "fontSize", "text": "30", "expected": shown["fingerprint"] ?? NSNull()])
        #expect(stale.status == 409)
        let current = try #require(try stale.json()["entry"] as? [String: Any])
        #expect(current["value"] as? String == "20")
        #expect(try fontSize(sandbox) == 20)
        let forced = try editor.post(
            "api/write", ["key": "fontSize", "text": "30", "expected": shown["fingerprint"] ?? NSNull(), "force": true])
        #expect(forced.status == 200)
        #expect(try fontSize(sandbox) == 30)
    }

    @Test("A key the administrator manages is shown read-only with its file, and a write of it is refused")
    func managedKeyIsReadOnly() throws {
        let sandbox = try CommandSandbox()
        let administrator = sandbox.directory.appendingPathComponent("admin", isDirectory: true)
        let managed = administrator.appendingPathComponent("managed/\(Self.domain).plist")
        try FileManager.default.createDirectory(
            at: managed.deletingLastPathComponent(), withIntermediateDirectories: true)
        try PropertyList.encodeXML(["locked": true]).write(to: managed)
        try sandbox.store(["locked": false], as: Self.domain)
        let editor = try EditorSession(
            sandbox, domain: Self.domain, schema: Self.schema, environment: ["XDG_CONFIG_DIRS": administrator.path])
        let entry = try #require(try editor.entry("locked"))
        #expect(entry["writable"] as? Bool == false)
        #expect((entry["notWritableBecause"] as? String)?.contains(managed.path) == true)
        #expect(entry["source"] as? String == "managed" && entry["value"] as? String == "1")
        let refused = try editor.post(
            "api/write", ["key": "locked", "text": "true", "expected": entry["fingerprint"] ?? NSNull()])
        #expect(refused.status == 403)
        #expect((try refused.json()["error"] as? String)?.contains(managed.path) == true)
        #expect(try sandbox.storedValues(Self.domain)["locked"] as? Bool == false)
        #expect(try editor.post("api/reset", ["key": "locked"]).status == 403)
    }

    @Test("A change made by `defaults write` reaches the open page's event stream")
    func changesMadeElsewhereAreStreamed() throws {
        let sandbox = try CommandSandbox()
        let editor = try EditorSession(sandbox, domain: Self.domain, schema: Self.schema)
        let events = try EditorEventStream(editor)
        try events.wait(for: "the stream to open") { $0.contains(": live") }
        try sandbox.run("write", Self.domain, "fontSize", "40")
        try events.wait(for: "the change") { $0.contains("event: change") && $0.contains(#""editText":"40""#) }
        try sandbox.run("delete", Self.domain, "fontSize")
        try events.wait(for: "the reset") { $0.contains(#""editText":"12""#) }
    }

    @Test("Reset removes the user's value (the default is read again); reset of the domain removes every value")
    func resets() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(["fontSize": 30, "theme": "dark", "extra": "x"], as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain, schema: Self.schema)
        let reset = try editor.post("api/reset", ["key": "fontSize"])
        #expect(reset.status == 200)
        let entry = try #require(try reset.json()["entry"] as? [String: Any])
        #expect(entry["source"] as? String == "default" && entry["value"] as? String == "12")
        #expect(try fontSize(sandbox) == nil)
        // A key without a schema is gone once its value is.
        let deleted = try editor.post("api/reset", ["key": "extra"])
        let gone = try deleted.json()["entry"]
        #expect(deleted.status == 200 && (gone == nil || gone is NSNull))
        #expect(try editor.post("api/reset", ["all": true]).status == 200)
        // The file stays, with no value left.
        #expect(try sandbox.storedValues(Self.domain).isEmpty)
    }

    @Test("Keys without a schema are listed, added with a type, and keep their type when written")
    func keysWithoutSchema() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(["count": 3], as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain)
        let count = try #require(try editor.entry("count"))
        #expect(count["inSchema"] as? Bool == false && count["type"] as? String == "integer")
        #expect(
            try editor.post("api/write", ["key": "count", "text": "4", "expected": count["fingerprint"]!]).status == 200
        )
        #expect(try sandbox.storedValues(Self.domain)["count"] as? Int == 4)
        let added = try editor.post(
            "api/write",
            [
                "key": "sizes", "text": "<array><integer>1</integer><integer>2</integer></array>",
                "type": "array", "expected": NSNull(),
            ])
        #expect(added.status == 200, "\(added.text)")
        #expect(try sandbox.storedValues(Self.domain)["sizes"] as? [Int] == [1, 2])
        let wrongType = try editor.post(
            "api/write", ["key": "other", "text": "abc", "type": "integer", "expected": NSNull()])
        #expect(wrongType.status == 422)
    }

    @Test("Requests another page or program could send are refused, and write nothing")
    func refusesForeignRequests() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(["fontSize": 20], as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain, schema: Self.schema)
        let page = try editor.request("GET", editor.api(""))
        #expect(page.status == 200)
        #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(page.headers["referrer-policy"] == "no-referrer")
        #expect(try editor.request("GET", "/\(editor.secret)").status == 308)

        // No secret, a wrong one of the same length, or one cut short.
        #expect(try editor.request("GET", "/").status == 404)
        #expect(try editor.request("GET", "/api/domain").status == 404)
        let wrong = String(editor.secret.reversed())
        #expect(try editor.request("GET", "/\(wrong)/api/domain").status == 404)
        #expect(try editor.request("GET", "/\(editor.secret.dropLast())/api/domain").status == 404)
        // Another name for this address (DNS rebinding).
        #expect(
            try editor.request("GET", editor.api("api/domain"), host: "attacker.example:\(editor.port)").status == 421)
        #expect(try editor.request("GET", editor.api("api/domain"), host: "127.0.0.1:1").status == 421)
        // Data fetched by another site.
        #expect(
            try editor.request("GET", editor.api("api/domain"), headers: [("Sec-Fetch-Site", "cross-site")]).status
                == 403)

        let body = try JSONSerialization.data(withJSONObject: ["key": "fontSize", "text": "9", "force": true])
        let json = ("Content-Type", "application/json")
        // A cross-origin POST, one without an origin, a form's content type, a GET of a write.
        #expect(
            try editor.request(
                "POST", editor.api("api/write"), headers: [("Origin", "http://attacker.example"), json], body: body
            ).status == 403)
        #expect(try editor.request("POST", editor.api("api/write"), headers: [json], body: body).status == 403)
        #expect(
            try editor.request(
                "POST", editor.api("api/write"),
                headers: [("Origin", editor.origin), ("Sec-Fetch-Site", "same-site"), json],
                body: body
            ).status == 403)
        #expect(
            try editor.request(
                "POST", editor.api("api/write"),
                headers: [("Origin", editor.origin), ("Content-Type", "application/x-www-form-urlencoded")], body: body
            ).status == 415)
        #expect(try editor.request("GET", editor.api("api/write")).status == 405)
        #expect(
            try editor.request("PUT", editor.api("api/write"), headers: [("Origin", editor.origin), json], body: body)
                .status == 405)
        // A body larger than any value a person edits.
        let large =
            Data(#"{"key":"fontSize","text":""#.utf8) + Data(repeating: UInt8(ascii: "1"), count: 1 << 20)
            + Data(#""}"#.utf8)
        #expect(
            try editor.request(
                "POST", editor.api("api/write"), headers: [("Origin", editor.origin), json], body: large
            ).status == 413)
        // Not the JSON the page sends.
        #expect(
            try editor.request(
                "POST", editor.api("api/write"), headers: [("Origin", editor.origin), json], body: Data("[".utf8)
            ).status
                == 400)
        #expect(try fontSize(sandbox) == 20)
    }

    @Test("A domain of 1,000 keys is served whole")
    func thousandKeys() throws {
        let sandbox = try CommandSandbox()
        var values: [String: Any] = [:]
        for index in 0..<1000 {
            values["key\(index)"] = index
        }
        try sandbox.store(values, as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain)
        let keys = try editor.request("GET", editor.api("api/domain")).json()["keys"] as? [[String: Any]] ?? []
        #expect(keys.count == 1000)
        #expect(keys.first { $0["name"] as? String == "key999" }?["value"] as? String == "999")
    }

    @Test("A damaged domain file is reported and left where it is; the editor does not start")
    func damagedFileIsLeftAlone() throws {
        let sandbox = try CommandSandbox()
        let damaged = Data("not a property list <".utf8)
        try damaged.write(to: sandbox.fileURL(Self.domain))
        let result = try sandbox.run("edit", Self.domain, "--no-open")
        #expect(result.status == 1)
        #expect(result.error.contains("is not a valid property list"), "\(result.error)")
        #expect(sandbox.bytes(Self.domain) == damaged)
        #expect(try sandbox.fileNames().filter { $0.contains("corrupt") }.isEmpty)
    }

    @Test("A reset of a value changed since the page read it is refused; a value too large to edit is shown cut short")
    func resetConflictAndLargeValues() throws {
        let sandbox = try CommandSandbox()
        let large = String(repeating: "é", count: 60_000)
        try sandbox.store(["fontSize": 30, "notes": large], as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain, schema: Self.schema)
        let shown = try #require(try editor.entry("fontSize"))
        try sandbox.run("write", Self.domain, "fontSize", "31")
        let stale = try editor.post("api/reset", ["key": "fontSize", "expected": shown["fingerprint"] ?? NSNull()])
        #expect(stale.status == 409)
        #expect(try fontSize(sandbox) == 31)
        let notes = try #require(try editor.entry("notes"))
        #expect(notes["tooLargeToEdit"] as? Bool == true && notes["editText"] == nil)
        let text = try #require(notes["value"] as? String)
        #expect(text.utf8.count <= 64 * 1024 + 3 && text.hasSuffix("…"))
    }

    @Test("A request not sent whole in time is closed; HEAD does not open an event stream")
    func slowRequestsAndHeadOfEvents() throws {
        let sandbox = try CommandSandbox()
        let editor = try EditorSession(sandbox, domain: Self.domain)
        #expect(try editor.request("HEAD", editor.api("api/events")).status == 405)
        // A head that never ends: the server closes the connection (its deadline, not this test's).
        let partial = Data(
            "GET /\(editor.secret)/api/domain HTTP/1.1\r\nHost: 127.0.0.1:\(editor.port)\r\nX-Slow: 1".utf8)
        #expect(try EditorSession.isClosedByServer(port: editor.port, after: partial))
        // Closing it was that connection's end, not the server's.
        #expect(try editor.request("GET", editor.api("api/domain")).status == 200)
    }

    @Test(
        "A body that grows past 1 MB without saying its length is refused as it passes; more pages than 16 get no stream"
    )
    func unannouncedLargeBodiesAndStreamLimit() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(["fontSize": 20], as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain, schema: Self.schema)
        var request = "POST \(editor.api("api/write")) HTTP/1.1\r\nHost: 127.0.0.1:\(editor.port)\r\n"
        request += "Origin: \(editor.origin)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        var bytes = Data(request.utf8)
        let chunk = Data(repeating: UInt8(ascii: "1"), count: 64 * 1024)
        for _ in 0..<20 {
            bytes += Data("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Data("\r\n".utf8)
        }
        bytes += Data("0\r\n\r\n".utf8)
        #expect(try EditorSession.parse(EditorSession.exchange(port: editor.port, bytes)).status == 413)
        #expect(try fontSize(sandbox) == 20)

        var streams: [EditorEventStream] = []
        for _ in 0..<16 {
            let stream = try EditorEventStream(editor)
            try stream.wait(for: "the stream to open") { $0.contains(": live") }
            streams.append(stream)
        }
        #expect(try editor.request("GET", editor.api("api/events")).status == 503)
        streams.removeAll()
        // A page gone leaves its place to another.
        try waitUntil("a stream's place to be free") {
            let stream = try EditorEventStream(editor)
            try? stream.wait(for: "an answer") { $0.hasPrefix("HTTP/1.1") && $0.contains("\r\n\r\n") }
            return stream.text.hasPrefix("HTTP/1.1 200")
        }
    }

    @Test("--path edits the file as it is named, as every verb's --path does; -g the global domain")
    func pathAndGlobalDomain() throws {
        let sandbox = try CommandSandbox()
        let file = sandbox.directory.appendingPathComponent("settings")
        let editor = try EditorSession(sandbox, domain: "settings", choosing: ["--path", file.path])
        let written = try editor.post(
            "api/write", ["key": "count", "text": "1", "type": "integer", "expected": NSNull()])
        #expect(written.status == 200, "\(written.text)")
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(!FileManager.default.fileExists(atPath: file.path + ".plist"))

        let global = try EditorSession(sandbox, domain: "NSGlobalDomain", choosing: ["-g"])
        #expect(
            try global.post("api/write", ["key": "g", "text": "x", "type": "string", "expected": NSNull()]).status
                == 200)
        #expect(try sandbox.run("read", "-g", "g").output == "x\n")
    }
}
