@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation

extension FileSuiteTemporaryDirectory {
    /// Writes the suite's file as an older version of a program left it, without a suite.
    func writeOldFile(_ values: [String: Any], name: String = "test") throws {
        let data = try PropertyList.encodeXML(values)
        let url = fileURL(name)
        try? FileManager.default.removeItem(at: url)
        guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw FileSuiteTestFailure("could not write \(url.path)") }
    }

    /// The bytes of the suite's file.
    func fileData(_ name: String = "test") throws -> Data {
        try Data(contentsOf: fileURL(name))
    }
}

/// A setting stored as an enum's raw value, once a plain string.
enum MigrationTestSize: String, Defaults.Serializable {
    case small, large
}

/// A value Defaults stored as a JSON string, now stored as a native property list.
struct MigrationTestWindow: Codable, Equatable, Defaults.Serializable, Defaults.PreferPropertyList {
    var width: Int
    var height: Int
}
