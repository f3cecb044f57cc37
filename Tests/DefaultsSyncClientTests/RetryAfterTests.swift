import DefaultsSyncProtocol
import Testing

@_spi(Testing) @testable import DefaultsSyncClient

/// The client reads the server's back-off from the reason it closed the connection with, which its
/// reconnection loop then waits at least (`ReconnectionPolicy.NextWait.atLeast`).
struct RetryAfterTests {
    @Test func aCloseAskingToRetryLaterNamesTheWait() {
        let reason = SyncCloseReason.tryAgainLater.text(retryAfter: .seconds(7), "a reconnection storm")
        #expect(SyncServiceError.closed(code: "1013", reason: reason).retryAfter == .seconds(7))
        #expect(SyncServiceError.closed(code: "1008", reason: SyncCloseReason.slowConsumer.text()).retryAfter == nil)
        #expect(SyncServiceError.closed(code: nil, reason: nil).retryAfter == nil)
        #expect(SyncServiceError.unauthorized(reason: "retry after 5 s").retryAfter == nil)
    }
}
