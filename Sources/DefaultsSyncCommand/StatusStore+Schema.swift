import DefaultsSyncProtocol
import DefaultsSyncSQL
import Foundation
import Logging

extension StatusStore {
    /// What a PostgreSQL database holds, only read: over one connection, in one read-only
    /// transaction, within the timeout, which schema it holds and at which version
    /// (`SyncSchema.inspect`), then the namespace's records (`SyncRows.stamps`, the store's own
    /// read). Nothing is created or migrated, so a role with `CONNECT` on the database and `SELECT`
    /// on the store's table may ask.
    ///
    /// - Throws: ``StatusProblem``: the database is the sync service's, its schema is newer than
    ///   this program's, or it could not be read.
    func readOnlyView(of database: PostgresURL) async throws -> View {
        let rows = namespace.map { SyncTable.store(namespace: $0) }
        let logger = Logger(label: "defaults-sync.status")
        let schema = SyncSchema.store
        let inspection: SchemaInspection
        let stamps: [WireStamp]?
        do {
            (inspection, stamps) = try await SyncSchema.inspect(url: database, timeout: timeout, logger: logger) {
                inspection, connection in
                // The rows as they are, of an older schema too, which `migrate` would migrate first.
                switch inspection.standing(of: schema) {
                case .older, .current: break
                case .absent, .newer: return (inspection, nil)
                }
                return (inspection, try await rows?.stamps(on: connection, logger: logger))
            }
        } catch {
            let message = "\(error)"
            throw StatusProblem(message.contains("no answer within") ? .timedOut : .unreachable, message)
        }
        let newest = stamps?.map(\.wall).max()
        let lastChange = newest.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        switch inspection.standing(of: schema) {
        case .absent where inspection.serviceVersion != nil:
            throw StatusProblem(
                .serviceDatabase,
                "\(database) is the sync service's database (it holds \(SyncTable.service.name), not "
                    + "\(SyncTable.store.name)): the service's records are read through the service, never "
                    + "from its database; ask the service: set \(DefaultsSyncTool.urlVariable) to its wss:// URL "
                    + "and \(DefaultsSyncTool.tokenVariable) to a token of the user's. Nothing was created.")
        case .absent:
            return View(
                records: 0,
                note: "nothing has synced through this database yet: it holds no sync table (none was created)")
        case .newer(let version):
            throw StatusProblem(
                .newerSchema,
                "\(database): the store's schema (\(schema.versionTable)) is version \(version), newer than "
                    + "this program's (\(schema.currentVersion)): update defaults-sync (\(schema.program)). "
                    + "Nothing was changed.")
        case .older(let version):
            return View(
                records: stamps?.count, lastChange: lastChange,
                note: "the store's schema (\(schema.versionTable)) is version \(version), older than this "
                    + "program's (\(schema.currentVersion)): counted without migrating it; an application of "
                    + "this version migrates it when it connects")
        case .current:
            return View(records: stamps?.count, lastChange: lastChange)
        }
    }
}
