import Defaults
import DefaultsPostgres

// The PostgreSQL example of the SyncingBetweenMachines article, kept here so that it compiles with the
// package. It is not run: it connects to a server named `host`; the tests beside it run the same
// calls against a real server.

extension Defaults.Keys {
    fileprivate static let isUnicornMode = Key<Bool>("isUnicornMode", default: false, iCloud: true)
}

func readmeSyncExample() async throws {
    Defaults.iCloud.use(try PostgresSyncStore(url: "postgres://user@host:5432/db", namespace: "com.example.app"))
    Defaults[.isUnicornMode] = true  // local at once, then on every other machine
    await Defaults.iCloud.waitForSyncCompletion()  // only when you must know it is on the server
}
