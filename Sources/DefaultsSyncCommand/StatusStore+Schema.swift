import DefaultsSyncProtocol
import DefaultsSyncSQL
import Foundation
import Logging

extension StatusStore {
    /// What a PostgreSQL database holds, read before the store runs: `PostgresSyncStore` creates its
    /// tables in a database without them and migrates an older schema when it connects, and a
    /// status never writes. Over one connection, read only, within the store's timeout.
    ///
    /// - Returns: The view of a database the store must not be run on: one without any sync table
    ///   (no record), or at an older schema (its records counted as they are); `nil` for one at
    ///   this program's schema, which the store, run as an application runs it, leaves unchanged.
    /// - Throws: ``StatusProblem``: the database is the sync service's, its schema is newer than
    ///   this program's, or it could not be read.
    func viewWithoutMigrating(_ database: PostgresURL) async throws -> View? {
        let rows = namespace.map { SyncTable.store(namespace: $0) }
        let logger = Logger(label: "defaults-sync.status")
        let schema = SyncSchema.store
        let inspection: SchemaInspection
        let stamps: [WireStamp]?
        do {
            (inspection, stamps) = try await SyncSchema.inspect(url: database, timeout: timeout, logger: logger) {
                inspection, connection in
                // The store's own read (`timestamps()`), on rows `migrate` would have migrated first.
                guard case .older = inspection.standing(of: schema), let rows else { return (inspection, nil) }
                return (inspection, try await rows.stamps(on: connection, logger: logger))
            }
        } catch {
            let message = "\(error)"
            throw StatusProblem(message.contains("no answer within") ? .timedOut : .unreachable, message)
        }
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
            let newest = stamps?.map(\.wall).max()
            return View(
                records: stamps?.count, lastChange: newest.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                note: "the store's schema (\(schema.versionTable)) is version \(version), older than this "
                    + "program's (\(schema.currentVersion)): counted without migrating it; an application of "
                    + "this version migrates it when it connects")
        case .current:
            return nil
        }
    }
}
