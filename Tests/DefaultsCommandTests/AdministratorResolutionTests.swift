import Defaults
import DefaultsPropertyList
import DefaultsSchema
import Foundation
import TestSupport
import Testing

/// One resolution of the administrator's layers: what a program's key reads is what every verb of
/// the command says, and what the library's writability says.
@Suite("one administrator resolution: the command's verbs and the library agree", .mayBlock)
struct AdministratorResolutionTests {
    static let domain = ManagedEditTests.domain

    @Test("A managed value the key cannot read is passed over by every verb and by the library, and said so")
    func unreadableManagedValuePassedOverEverywhere() throws {
        let administered = try ManagedEditTests.Administered()
        try administered.declare([
            KeySchema(name: "volume", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(5))
        ])
        try administered.manage(["volume": "loud"])
        let userFile = administered.sandbox.fileURL(Self.domain)
        let passedOver =
            "the administrator's enforced value of \"volume\" in \(administered.managedFile.path) was ignored: "
            + "expected integer, found string; the next layer is read\n"

        // The key is not enforced: the write is stored.
        let written = try administered.run("write", Self.domain, "volume", "-int", "7")
        #expect(written.status == 0, "\(written)")
        #expect(try administered.sandbox.storedValues(Self.domain)["volume"] as? Int == 7)

        let source = try administered.run("read-source", Self.domain, "volume")
        #expect(source.status == 0, "\(source)")
        #expect(source.output == "user \(userFile.path)\n", "\(source)")
        #expect(source.error == passedOver, "\(source)")

        let effective = try administered.run("read", "--effective", Self.domain, "volume")
        #expect(effective.output == "7\n", "\(effective)")
        #expect(effective.error == passedOver, "\(effective)")
        let domainRead = try administered.run("read", "--effective", "--json", Self.domain)
        let values = try JSONSerialization.jsonObject(with: Data(domainRead.output.utf8)) as? [String: Any]
        #expect(values?["volume"] as? Int == 7, "\(domainRead)")

        let writable = try administered.run("writable", Self.domain, "volume")
        #expect(writable.output == "true\n", "\(writable)")
        #expect(writable.error == passedOver, "\(writable)")

        let explained = try explanation(administered)
        #expect(explained.writable)
        #expect(explained.read == "user")
        #expect(explained.ignored == ["managed": "expected integer, found string"])

        // The program's own key: the user's value, writable, from the user's file.
        let suite = FileSuite(
            name: Self.domain, directory: administered.sandbox.directory, arguments: [],
            administratorDirectories: [administered.administrator])
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        #expect(Defaults[volume] == 7)
        #expect(Defaults.writability(of: volume) == .writable)
        #expect(suite.valueSource(forKey: "volume")?.description == "user \(userFile.path)")
        let problem = suite.problems.first { $0.kind == .wrongType }
        #expect(problem?.fileURL?.path == administered.managedFile.path)
        Defaults[volume] = 9
        try suite.flush()
        #expect(try administered.run("read", Self.domain, "volume").output == "9\n")
    }

    @Test("A vendor default the key cannot read, beneath the user's value, is said ignored as the library reports it")
    func unreadableVendorDefaultBeneathTheUsersValue() throws {
        let administered = try ManagedEditTests.Administered()
        try administered.declare([
            KeySchema(name: "volume", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(5))
        ])
        let vendorFile = administered.administrator.appendingPathComponent("\(Self.domain).plist")
        try PropertyList.encodeXML(["volume": "loud"]).write(to: vendorFile)
        try administered.sandbox.store(["volume": 7], as: Self.domain)
        let ignored =
            "the administrator's default of \"volume\" in \(vendorFile.path) was ignored: "
            + "expected integer, found string; the next layer is read"

        let source = try administered.run("read-source", Self.domain, "volume")
        #expect(source.output == "user \(administered.sandbox.fileURL(Self.domain).path)\n", "\(source)")
        #expect(source.error == ignored + "\n", "\(source)")
        #expect(try explanation(administered).ignored == ["vendor": "expected integer, found string"])

        let suite = FileSuite(
            name: Self.domain, directory: administered.sandbox.directory, arguments: [],
            administratorDirectories: [administered.administrator])
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        #expect(Defaults[volume] == 7)
        // Reported as ignored by the library too (in its own words for why).
        #expect(suite.problems.contains { $0.kind == .wrongType && $0.fileURL?.path == vendorFile.path })
    }

    @Test("A managed value the key reads enforces it in every verb and in the library")
    func readableManagedValueEnforcedEverywhere() throws {
        let administered = try ManagedEditTests.Administered()
        try administered.declare([
            KeySchema(name: "volume", type: .integer, swiftType: "Swift.Int", defaultValue: .integer(5))
        ])
        try administered.sandbox.store(["volume": 7], as: Self.domain)
        try administered.manage(["volume": 3])
        let enforced = "managed by the administrator in \(administered.managedFile.path)"

        try administered.expectRefused(["write", Self.domain, "volume", "-int", "8"], keys: "key volume")
        let source = try administered.run("read-source", Self.domain, "volume")
        #expect(source.output == "managed \(administered.managedFile.path)\n", "\(source)")
        #expect(source.error.isEmpty, "\(source)")
        #expect(try administered.run("read", "--effective", Self.domain, "volume").output == "3\n")
        #expect(try administered.run("writable", Self.domain, "volume").output == "false: \(enforced)\n")
        let explained = try explanation(administered)
        #expect(!explained.writable)
        #expect(explained.read == "managed")
        #expect(explained.ignored.isEmpty)

        let suite = FileSuite(
            name: Self.domain, directory: administered.sandbox.directory, arguments: [],
            administratorDirectories: [administered.administrator])
        let volume = Defaults.Key<Int>("volume", default: 5, suite: suite)
        #expect(Defaults[volume] == 3)
        #expect(Defaults.writability(of: volume).description == enforced)
        #expect(suite.valueSource(forKey: "volume")?.description == "managed \(administered.managedFile.path)")
    }

    /// What `explain --json` says of `volume`: whether it is writable, the layer read, and why
    /// each ignored layer is, by layer.
    private func explanation(
        _ administered: ManagedEditTests.Administered
    ) throws -> (writable: Bool, read: String?, ignored: [String: String]) {
        let result = try administered.run("explain", "--json", Self.domain, "volume")
        #expect(result.status == 0, "\(result)")
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        let layers = object?["layers"] as? [[String: Any]] ?? []
        var ignored: [String: String] = [:]
        for layer in layers where layer["layer"] as? String != "default" {
            if let reason = layer["ignored"] as? String, let name = layer["layer"] as? String {
                ignored[name] = reason
            }
        }
        return (
            object?["writable"] as? Bool ?? false,
            layers.first { $0["isRead"] as? Bool == true }?["layer"] as? String, ignored
        )
    }
}
