@_spi(Testing) import Defaults
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("FileSuite durability", .mayBlock)
struct FileSuiteCrashTests {
    /// R2: a writer that flushes in a loop, killed with SIGKILL at random moments 200 times. After
    /// each kill the file parses and holds a prefix of the writes: every acknowledged one, and at
    /// most the one in flight beyond them.
    @Test func killedWriterLeavesAPrefixOfAcknowledgedWrites() throws {
        let directory = try FileSuiteTemporaryDirectory()
        var durable = -1
        var totalAcknowledged = 0
        var roundsKilledMidWrite = 0
        for round in 0..<200 {
            let child = try TestHelper.start(["filesuite-ack-loop", directory.path, "crash"])
            _ = try child.line { $0 == "ready" }
            usleep(UInt32.random(in: 0...15_000))
            child.kill()
            let text = try child.finish().output
            // A line cut short by the kill is not an acknowledgement.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            let acknowledged = lines.compactMap { Int($0) }
            totalAcknowledged += acknowledged.count
            let lastAcknowledged = acknowledged.last ?? durable

            let values: [String: Any]
            do {
                values = try directory.storedValues("crash")
            } catch {
                #expect(lastAcknowledged == -1, "round \(round): the file does not parse: \(error)")
                continue
            }
            let last = values["last"] as? Int ?? -1
            #expect(last >= lastAcknowledged, "round \(round): acknowledged \(lastAcknowledged), file has \(last)")
            #expect(last <= lastAcknowledged + 1, "round \(round): acknowledged \(lastAcknowledged), file has \(last)")
            for index in max(0, last - 9)...max(0, last) where last >= 0 {
                #expect(values["slot\(index % 10)"] as? Int == index, "round \(round): slot of \(index)")
            }
            if last == lastAcknowledged + 1 {
                roundsKilledMidWrite += 1
            }
            durable = last
        }
        // How many writes were acknowledged depends on how busy the machine is; the property
        // checked above does not.
        CapturedLogs.note(
            "R2: \(totalAcknowledged) acknowledged writes in 200 rounds; \(roundsKilledMidWrite) kills landed after a write was durable but before its acknowledgement"
        )
        // Temporary files of killed writers are cleaned up by the next writer.
        #expect(try directory.files(startingWith: ".crash.plist.tmp-").count <= 1)
    }
}
