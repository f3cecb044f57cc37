import DefaultsSyncProtocol

/// What a device's connection asks of its instance: to be admitted, its messages answered, and to
/// leave. ``InstanceBackend`` is the service's; tests give a connection one of their own, so that
/// ``DeviceConnection`` runs with no network and no database.
protocol ConnectionBackend: Sendable {
    /// Admits the device whose token carries `claims` and queues its welcome to `outbox`, or says
    /// why not. An admitted device counts against its user's connections until ``leave(_:claims:)``.
    func admit(_ outbox: DeviceOutbox, claims: TokenClaims, client: ClientAddress) async -> Admission
    /// The answer to one message: `text`, or `nil` for a binary one.
    func answer(_ text: String?, claims: TokenClaims) async -> ServerMessage
    /// A refused device held for a while (``Admission/refused(_:text:holdFor:)``) is let go.
    func endHold(claims: TokenClaims)
    /// An admitted device left.
    func leave(_ outbox: DeviceOutbox, claims: TokenClaims) async
    /// A device is closed as a slow consumer: how long it is asked to wait before it connects again.
    func closedAsSlowConsumer(_ claims: TokenClaims) -> Duration
}

/// Whether a device's connection was admitted.
enum Admission: Sendable, Equatable {
    case admitted
    /// Closed for `reason`, with `text` in the close frame; held first for `holdFor` (what it
    /// sends read and dropped) when given, and then ``ConnectionBackend/endHold(claims:)``.
    case refused(SyncCloseReason, text: String, holdFor: Duration? = nil)
}
