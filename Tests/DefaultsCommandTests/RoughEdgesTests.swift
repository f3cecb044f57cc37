import Foundation
import TestSupport
import Testing

/// What a new user meets first: a mistyped type flag is refused by name, and nothing is written.
@Suite("rough edges", .mayBlock)
struct RoughEdgesTests {
    private let domain = "com.example.rough"

    /// Runs `write domain key words…`, which must fail as a usage error whose message names
    /// `flag`, leaving the directory and the domain's file exactly as they were.
    private func expectRefused(
        _ sandbox: CommandSandbox, _ words: [String], naming flag: String, suggesting suggestion: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = sandbox.bytes(domain)
        let namesBefore = try sandbox.fileNames()
        let result = try sandbox.run(["write", domain, "key"] + words)
        #expect(result.status == 64, "\(words): \(result)", sourceLocation: sourceLocation)
        #expect(result.error.contains(flag), "\(words): \(result)", sourceLocation: sourceLocation)
        if let suggestion {
            #expect(result.error.contains("Did you mean \(suggestion)?"), "\(result)", sourceLocation: sourceLocation)
        }
        #expect(result.error.contains("nothing was written"), "\(result)", sourceLocation: sourceLocation)
        #expect(result.output.isEmpty, "\(result)", sourceLocation: sourceLocation)
        #expect(sandbox.bytes(domain) == before, "\(words) changed the file", sourceLocation: sourceLocation)
        #expect(try sandbox.fileNames() == namesBefore, "\(words) added a file", sourceLocation: sourceLocation)
    }

    @Test("A mistyped type flag names the flag and the one meant, and writes nothing")
    func mistypedFlagOnNewDomain() throws {
        let sandbox = try CommandSandbox()
        try expectRefused(sandbox, ["-interger", "5"], naming: "-interger", suggesting: "-integer")
        try expectRefused(sandbox, ["-strng", "hello"], naming: "-strng", suggesting: "-string")
        try expectRefused(sandbox, ["-bolean", "yes"], naming: "-bolean", suggesting: "-boolean")
        try expectRefused(sandbox, ["-arary", "a", "b"], naming: "-arary", suggesting: "-array")
        // Nothing close enough: no suggestion, still refused by name.
        try expectRefused(sandbox, ["-colour", "red"], naming: "-colour", suggesting: nil)
        #expect(sandbox.bytes(domain) == nil)
    }

    @Test("A mistyped flag inside an array or a dictionary leaves the existing value alone")
    func mistypedFlagInCollections() throws {
        let sandbox = try CommandSandbox()
        #expect(try sandbox.run("write", domain, "key", "-int", "3").status == 0)
        try expectRefused(sandbox, ["-array", "1", "-interger", "2"], naming: "-interger", suggesting: "-integer")
        try expectRefused(sandbox, ["-dict", "a", "-flaot", "1.5"], naming: "-flaot", suggesting: "-float")
        try expectRefused(sandbox, ["-array", "1", "-dict"], naming: "-dict", suggesting: nil)
        #expect(try sandbox.run("read", domain, "key").output == "3\n")
    }

    @Test("Text that looks like a flag is stored with -string; numbers and plain words still work")
    func flagLikeTextStillStorable() throws {
        let sandbox = try CommandSandbox()
        #expect(try sandbox.run("write", domain, "text", "-string", "-interger").status == 0)
        // A bare word is a string, as on macOS, even when it starts with a dash.
        #expect(try sandbox.run("write", domain, "bare", "-5").status == 0)
        #expect(try sandbox.run("write", domain, "negative", "-int", "-5").status == 0)
        #expect(try sandbox.run("write", domain, "dash", "-").status == 0)
        #expect(try sandbox.run("write", domain, "list", "-array", "-int", "-1", "-string", "-x").status == 0)
        let values = try sandbox.storedValues(domain)
        #expect(values["text"] as? String == "-interger")
        #expect(values["bare"] as? String == "-5")
        #expect(values["negative"] as? Int == -5)
        #expect(values["dash"] as? String == "-")
        let list = values["list"] as? [Any]
        #expect(list?.first as? Int == -1)
        #expect(list?.last as? String == "-x")
    }

    @Test("-g with --path is a usage error that writes nothing")
    func globalDomainWithPath() throws {
        let sandbox = try CommandSandbox()
        let file = sandbox.path + "/other.plist"
        let result = try sandbox.run(["write", "-g", "--path", file, "key", "-int", "1"])
        #expect(result.status == 64, "\(result)")
        #expect(result.error.contains("-g and --path cannot be used together"), "\(result)")
        #expect(try sandbox.fileNames().isEmpty, "nothing is written, neither the global domain nor the file")
    }
}
