/// One push per owner at a time on this instance, the others waiting in turn before they take a
/// pooled database connection: a push that took one first would hold it while it waits for the
/// owner's lock in PostgreSQL, and one user's pushes could hold the whole pool waiting. The lock in
/// PostgreSQL stays, for pushes of the same owner through several instances.
struct OwnerTurns: Sendable {
    private let turns = KeyedPermits<Owner>(permits: 1)

    /// Runs `push` in `owner`'s turn, after the pushes of `owner` that came before it. The waiters
    /// are bounded by the owner's connections (each asks one thing at a time).
    func inTurn<Value>(of owner: Owner, _ push: () async throws -> Value) async throws -> Value {
        try await turns.withPermit(for: owner, push)
    }

    /// The pushes of `owner` waiting for their turn now.
    func waiting(of owner: Owner) -> Int { turns.waiters(for: owner) }
}
