import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

/// `defaults edit` in a real browser (headless Chromium): what a person does in the page, seen in
/// the file, in a running program's observer, and in the page itself.
@Suite(
    "defaults edit: the page in Chromium", .mayBlock, .serialized,
    .enabled(if: BrowserPage.isAvailable, "needs chromium, chromium-driver and python3-selenium (Debian)"))
struct EditorBrowserTests {
    static let domain = "com.example.edited"

    /// The program of `SchemaCommands` running on the sandbox: it exports its schema (fontSize
    /// 8 through 72, default 12; theme; volume; nickname; showsToolbar) and prints each change of
    /// fontSize its observer sees.
    private func startProgram(_ sandbox: CommandSandbox) throws -> ChildProcess {
        let program = try ChildProcess(
            builtExecutable("DefaultsTestHelper"), ["schema-observe", sandbox.path, Self.domain],
            environment: sandbox.environment)
        _ = try program.line { $0 == "ready" }
        return program
    }

    @Test(
        "An integer set within its range reaches the file and a running program; one outside it is refused in the page")
    func editsAnInteger() throws {
        let sandbox = try CommandSandbox()
        let program = try startProgram(sandbox)
        let editor = try EditorSession(sandbox, domain: Self.domain)
        let page = try BrowserPage()
        let opened = try page.open(editor.address)
        #expect(opened["ready"] as? String == "true")

        let before = try page.row("fontSize")
        #expect(before["value"] as? String == "12" && before["controlEnabled"] as? Bool == true)
        let set = try page.set("fontSize", to: "16")
        #expect(set["value"] as? String == "16" && set["error"] == nil, "\(set)")
        #expect(try sandbox.storedValues(Self.domain)["fontSize"] as? Int == 16)
        _ = try program.line { $0 == "fontSize=16" }

        // Nothing the page did was blocked (its Content-Security-Policy) or failed in its script.
        let errors = try page.consoleErrors()
        #expect(errors.isEmpty, "\(errors)")

        // The picture in TheDefaultsCommand's article: this page, as the test sees it
        // (DEFAULTS_EDITOR_SCREENSHOT=<the catalog's defaults-edit.png> to take it again).
        let screenshot =
            ProcessInfo.processInfo.environment["DEFAULTS_EDITOR_SCREENSHOT"]
            ?? sandbox.directory.appendingPathComponent("editor.png").path
        try page.send(["do": "screenshot", "path": screenshot])
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.starts(with: [0x89, 0x50, 0x4e, 0x47]))

        let refused = try page.set("fontSize", to: "99")
        #expect((refused["error"] as? String)?.contains("Refused to write fontSize") == true, "\(refused)")
        #expect(refused["value"] as? String == "16")
        #expect(try sandbox.storedValues(Self.domain)["fontSize"] as? Int == 16)
        #expect(!program.lines().contains("fontSize=99"))
        program.signal(SIGTERM)
    }

    @Test("A managed key cannot be edited, and the page names the administrator's file")
    func managedKeyIsReadOnly() throws {
        let sandbox = try CommandSandbox()
        let administrator = sandbox.directory.appendingPathComponent("admin", isDirectory: true)
        let managed = administrator.appendingPathComponent("managed/\(Self.domain).plist")
        try FileManager.default.createDirectory(
            at: managed.deletingLastPathComponent(), withIntermediateDirectories: true)
        try PropertyList.encodeXML(["showsToolbar": false]).write(to: managed)
        let program = try startProgram(sandbox)
        let editor = try EditorSession(
            sandbox, domain: Self.domain, environment: ["XDG_CONFIG_DIRS": administrator.path])
        let page = try BrowserPage()
        _ = try page.open(editor.address)
        let row = try page.row("showsToolbar")
        #expect(row["controlEnabled"] as? Bool == false, "\(row)")
        #expect((row["managed"] as? String)?.contains(managed.path) == true, "\(row)")
        #expect(try page.row("fontSize")["controlEnabled"] as? Bool == true)
        program.signal(SIGTERM)
    }

    @Test("A change made by `defaults write` appears in the open page; reset brings back the default")
    func changesElsewhereAndReset() throws {
        let sandbox = try CommandSandbox()
        let program = try startProgram(sandbox)
        let editor = try EditorSession(sandbox, domain: Self.domain)
        let page = try BrowserPage()
        _ = try page.open(editor.address)
        try sandbox.run("write", Self.domain, "fontSize", "30")
        try page.waitForValue("30", of: "fontSize")
        let reset = try page.press("reset", on: "fontSize")
        #expect(reset["value"] as? String == "12", "\(reset)")
        #expect(try sandbox.storedValues(Self.domain)["fontSize"] == nil)
        _ = try program.line { $0 == "fontSize=12" }
        program.signal(SIGTERM)
    }

    @Test("Search finds keys by name and by description")
    func search() throws {
        let sandbox = try CommandSandbox()
        let program = try startProgram(sandbox)
        let editor = try EditorSession(sandbox, domain: Self.domain)
        let page = try BrowserPage()
        _ = try page.open(editor.address)
        #expect(try page.search("font") == ["fontSize"])
        #expect(try page.search("LOUD") == ["volume"])
        #expect(try page.search("").count == 5)
        program.signal(SIGTERM)
    }

    @Test("A domain of 1,000 keys is shown whole, and a change to one of them appears")
    func thousandKeys() throws {
        let sandbox = try CommandSandbox()
        var values: [String: Any] = [:]
        for index in 0..<1000 {
            values["group\(index / 100).key\(index)"] = index
        }
        try sandbox.store(values, as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain)
        let page = try BrowserPage()
        let opened = try page.open(editor.address)
        #expect(opened["rows"] as? Int == 1000)
        try sandbox.run("write", Self.domain, "group9.key999", "-int", "5")
        try page.waitForValue("5", of: "group9.key999")
        #expect(try page.search("key99").count == 11)
    }

    @Test("Keys named like the page's own elements, or like markup, are shown as text and break nothing")
    func oddKeyNames() throws {
        let sandbox = try CommandSandbox()
        let markup = "<img src=x onerror=alert(1)>"
        try sandbox.store(["search": 1, "reset-all-dialog": 2, markup: 3, "add-name": "x"], as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain)
        let page = try BrowserPage()
        #expect(try page.open(editor.address)["rows"] as? Int == 4)
        #expect(try page.row(markup)["value"] as? String == "3")
        #expect(try page.search("reset") == ["reset-all-dialog"])
        _ = try page.search("")
        let set = try page.set("search", to: "5")
        #expect(set["value"] as? String == "5" && set["error"] == nil, "\(set)")
        #expect(try sandbox.storedValues(Self.domain)["search"] as? Int == 5)
        let errors = try page.consoleErrors()
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test(
        "What another site's page can send is refused: a request without the secret, another Host, a cross-origin POST")
    func foreignRequestsFromTheBrowser() throws {
        let sandbox = try CommandSandbox()
        try sandbox.store(["fontSize": 20], as: Self.domain)
        let editor = try EditorSession(sandbox, domain: Self.domain)
        let page = try BrowserPage()
        let missing = try page.send(["do": "visit", "url": "http://127.0.0.1:\(editor.port)/"])
        #expect(missing["text"] as? String == "Not found")
        // `localhost.` is another name for the loopback address, as a rebinding domain would be.
        let rebound = try page.send(["do": "visit", "url": "http://localhost.:\(editor.port)/\(editor.secret)/"])
        #expect((rebound["text"] as? String)?.hasPrefix("This page answers only to 127.0.0.1") == true, "\(rebound)")
        // Even knowing the secret, another origin's page writes nothing.
        let body = #"{"key":"fontSize","text":"9","force":true}"#
        let attack = try page.send(["do": "attack", "url": editor.address, "body": body])
        #expect((attack["cors"] as? String)?.hasPrefix("failed") == true, "\(attack)")
        #expect((attack["form"] as? String)?.contains("only from the editor's own page") == true, "\(attack)")
        #expect(try sandbox.storedValues(Self.domain)["fontSize"] as? Int == 20)
    }
}
