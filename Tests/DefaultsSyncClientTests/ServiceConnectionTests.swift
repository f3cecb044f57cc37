import Defaults
import DefaultsSyncProtocol
import Foundation
import Synchronization
import TestSupport
import Testing

@_spi(Testing) @testable import DefaultsSyncClient

/// The connection to the sync service reads calls' answers and other devices' changes from one
/// WebSocket: while the library is behind, it stops reading, except while one of its calls awaits
/// an answer, which comes behind the changes the server sent first.
struct ServiceConnectionTests {
    /// `EncryptedSyncStore` calls the connection from a task of its own while the library may be
    /// behind: the call is answered, and every change still reaches the library, in order.
    @Test(.timeLimit(.minutes(2)))
    func aCallIsAnsweredWhileTheLibraryHoldsTheEventsBack() async throws {
        // Far more changes ahead of the answer than the connection buffers.
        let (atStart, beforeReply) = (40, 40)
        let server = try await ScriptedSyncServer(changesAtStart: atStart, changesBeforeEachReply: beforeReply)
        var options = SyncServiceStore.Options()
        // Long enough that a machine however busy answers in time, once the answer is read; the
        // pings must not close the held reader meanwhile.
        options.responseTimeout = .seconds(20)
        options.pingInterval = .seconds(600)
        let connection = ServiceConnection(
            endpoint: try #require(ServiceEndpoint(url: server.url)), user: "u", namespace: "com.example.app",
            tokenProvider: { unsignedToken },
            description: "scripted server", options: options)
        let library = HeldLibrary()
        let running = Task { await connection.run { await library.report($0) } }

        // The library holds the first change; the server's next ones fill the connection's buffer.
        try await waitUntil("the library to hold the first change") { library.isHolding }
        let answer: [SyncRecord]
        do {
            answer = try await connection.records(forKeys: ["asked"])
        } catch {
            Issue.record("the call was not answered while the library held its events: \(error)")
            answer = []
        }
        #expect(answer.map(\.key) == ["asked"])
        #expect(answer.first?.value == Data("answer".utf8))
        #expect(server.callsAnswered == 1)

        library.release()
        let total = atStart + beforeReply
        try await waitUntil("every change to reach the library: \(library.received.count)") {
            library.received.count >= total
        }
        #expect(library.received == (1...total).map { "change-\($0)" })
        running.cancel()
        await running.value
        try await server.close()
    }

    /// A push of more records than one message carries sends every message before the first
    /// reply comes: one round trip however many (the server below answers only once all came).
    @Test(.timeLimit(.minutes(2)))
    func aPushOfSeveralMessagesSendsThemAllBeforeAnyReply() async throws {
        let count = SyncProtocol.maximumRecordsPerMessage * 2 + 500
        let server = try await ScriptedSyncServer(changesAtStart: 0, changesBeforeEachReply: 0, answersAfter: 3)
        var options = SyncServiceStore.Options()
        options.responseTimeout = .seconds(20)
        let connection = ServiceConnection(
            endpoint: try #require(ServiceEndpoint(url: server.url)), user: "u", namespace: "com.example.app",
            tokenProvider: { unsignedToken },
            description: "scripted server", options: options)
        let connected = Atomic<Bool>(false)
        let running = Task {
            await connection.run { event in
                if case .connected = event { connected.store(true, ordering: .relaxed) }
            }
        }
        try await waitUntil("the connection's welcome") { connected.load(ordering: .relaxed) }
        let records = (0..<count).map { index in
            SyncRecord(
                key: "k\(index)", value: Data("v".utf8),
                timestamp: SyncTimestamp(wallTime: 1, counter: 0, origin: "device"))
        }
        try await connection.push(records)
        #expect(server.callsAnswered == 3)
        #expect(server.recordsPushed == count)
        running.cancel()
        await running.value
        try await server.close()
    }
}

/// A library that takes a store's events and holds the first change it receives until released.
private final class HeldLibrary: Sendable {
    private struct State {
        var received: [String] = []
        var isHolding = false
        var isReleased = false
        var waiting: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// The keys of the changes received, in order.
    var received: [String] { state.withLock { $0.received } }
    var isHolding: Bool { state.withLock { $0.isHolding } }

    func report(_ event: SyncEvent) async {
        guard case .received(let records) = event else { return }
        let mustHold = state.withLock { state in
            defer { state.received += records.map(\.key) }
            return state.received.isEmpty && !state.isReleased
        }
        guard mustHold else { return }
        await withCheckedContinuation { continuation in
            let isReleased = state.withLock { state in
                if !state.isReleased {
                    state.waiting = continuation
                    state.isHolding = true
                }
                return state.isReleased
            }
            if isReleased { continuation.resume() }
        }
    }

    func release() {
        state.withLock { state in
            state.isReleased = true
            state.isHolding = false
            defer { state.waiting = nil }
            return state.waiting
        }?.resume()
    }
}
