// A child process for the tests: `DefaultsTestHelper <command> [arguments…]`.
// Each command lives in its own file; add a case here for a new one.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    FileHandle.standardError.write(Data("usage: DefaultsTestHelper <command> [arguments…]\n".utf8))
    exit(64)
}
let rest = Array(arguments.dropFirst())

switch command {
case "peak-memory": PeakMemoryCommand.run(rest)
case "userdefaults-write": UserDefaultsCommands.write(rest)
case "userdefaults-read": UserDefaultsCommands.read(rest)
case "filesuite-set": FileSuiteCommands.set(rest)
case "filesuite-get": FileSuiteCommands.get(rest)
case "filesuite-write-keys": FileSuiteCommands.writeKeys(rest)
case "filesuite-ack-loop": FileSuiteCommands.acknowledgeLoop(rest)
case "filesuite-wait-signal": FileSuiteCommands.waitForSignal(rest)
case "filesuite-file-size-limit": FileSuiteCommands.fileSizeLimit(rest)
case "filesuite-describe": FileSuiteCommands.describeSample(rest)
case "foundation-write": FileSuiteCommands.foundationWrite(rest)
case "foundation-read": FileSuiteCommands.foundationRead(rest)
case "types-write": FileSuiteCommands.typesWrite(rest)
case "types-read": FileSuiteCommands.typesRead(rest)
case "sample-describe": FileSuiteCommands.describeExpectedSample(rest)
case "trust-set-then-return": TrustCommands.setThenReturn(rest)
case "trust-set-then-block": TrustCommands.setThenBlock(rest)
case "trust-key-set-then-return": TrustCommands.keySetThenReturn(rest)
case "trust-increment": TrustCommands.increment(rest)
case "trust-hold-lock": TrustCommands.holdLock(rest)
case "trust-open": TrustCommands.open(rest)
case "trust-blocked-signals": TrustCommands.handleBlockedSignals(rest)
case "trust-fork": TrustCommands.forkAndWait(rest)
case "trust-own-handler": TrustCommands.keepOwnHandler(rest)
case "trust-no-suite-left": TrustCommands.sleepWithNoSuiteLeft(rest)
case "launch-arguments-read": LaunchArgumentCommands.read(rest)
case "observation-write": ObservationCommands.write(rest)
case "in-place-rewrite": InPlaceRewriteCommands.rewrite(rest)
case "schema-export": SchemaCommands.export(rest)
case "schema-observe": SchemaCommands.observe(rest)
case "migrate-renamed": MigrationCommands.renamed(rest)
case "migrate-chain": MigrationCommands.chain(rest)
default:
    FileHandle.standardError.write(Data("unknown command \(command)\n".utf8))
    exit(64)
}
