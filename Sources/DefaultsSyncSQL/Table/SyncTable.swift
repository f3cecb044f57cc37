/// A table of synced values: one row per owner and key, with its value, its version
/// (``RecordVersion``: `clock_wall`, `clock_counter`, `clock_origin`) and its number (`seq`), given
/// by the table's numbering trigger in the owner's commit order (``SyncSchema``).
///
/// Its names are fixed identifiers, never input: every query built over it binds its values.
public struct SyncTable: Sendable, Hashable {
    /// The table's name.
    public let name: String
    /// The text columns that name a row's owner, ahead of `key` in the primary key.
    public let ownerColumns: [String]
    /// The table that holds each owner's last number (`latest`), or `nil` when that is the highest
    /// number of the owner's rows.
    public let heads: String?

    private init(name: String, ownerColumns: [String], heads: String?) {
        self.name = name
        self.ownerColumns = ownerColumns
        self.heads = heads
    }

    /// `PostgresSyncStore`'s table: one row per namespace and key; numbers from one sequence,
    /// taken in each namespace's commit order.
    public static let store = SyncTable(name: "defaults_sync_values", ownerColumns: ["namespace"], heads: nil)

    /// The sync service's table: one row per user, namespace and key; each owner (a user's
    /// namespace) numbers its own rows from its head, with no gaps.
    public static let service = SyncTable(
        name: "defaults_sync_service_values", ownerColumns: ["user_id", "namespace"],
        heads: "defaults_sync_service_heads")

    /// ``SyncRows/store(_:on:logger:)``'s batch upsert, prepared on each connection
    /// (``FixedStatement``): a type per table, since a prepared statement's text is its type's.
    var batchUpsert: any FixedStatement.Type {
        self == .service ? ServiceBatchUpsert.self : StoreBatchUpsert.self
    }

    /// The store's rows of one namespace.
    public static func store(namespace: String) -> SyncRows {
        SyncRows(table: .store, owner: [namespace])
    }

    /// The service's rows of one user's namespace.
    public static func service(user: String, namespace: String) -> SyncRows {
        SyncRows(table: .service, owner: [user, namespace])
    }
}

enum StoreBatchUpsert: FixedStatement {
    static let sql = SyncRows.batchUpsertSQL(.store)
}

enum ServiceBatchUpsert: FixedStatement {
    static let sql = SyncRows.batchUpsertSQL(.service)
}
