import Defaults
import Foundation
import Testing

extension Trust {
    /// An empty (0-byte) suite file is an empty suite, as CoreFoundation reads it; the `defaults`
    /// command reads it the same way (see the command's tests).
    @Suite struct EmptyFileTests {
        @Test func emptyFileIsAnEmptySuite() throws {
            let directory = try FileSuiteTemporaryDirectory()
            try Data().write(to: directory.fileURL())
            let suite = directory.suite()
            #expect(suite.problems.isEmpty)
            #expect(suite.persistentValues().isEmpty)
            #expect(try directory.files(startingWith: "test.plist.corrupt").isEmpty)
            suite.set(1, forKey: "a")
            try suite.flush()
            #expect(try directory.storedValues()["a"] as? Int == 1)
        }
    }
}
