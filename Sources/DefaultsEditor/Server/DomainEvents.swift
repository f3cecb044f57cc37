import Defaults
import DefaultsCommandCore
import Dispatch
import Foundation
import Synchronization

/// Tells the open pages of every change of the domain, whoever made it (the program, `defaults
/// write`, another machine through sync, the editor itself): the domain is observed through a
/// suite on its file, as `defaults watch` observes it, and each change's keys are read again and
/// sent as one Server-Sent Event.
///
/// Changes that arrive while an event is being made are sent together in the next one, so that a
/// burst of writes costs one read of the domain, not one a key.
package final class DomainEvents: Sendable {
    private let domain: EditedDomain
    private let suite: FileSuite
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "defaults-edit-server.events")

    private struct State {
        var pending: Set<String> = []
        var isScheduled = false
        var listeners: [Int: @Sendable (Data) -> Bool] = [:]
        var nextID = 0
        var observation: SuiteChangeCenter.Token?
    }

    /// The most pages listening at once: an event is sent to each, and a page reconnects after its
    /// connection ends.
    package static let listenerLimit = 16

    package init(domain: EditedDomain) {
        self.domain = domain
        suite = domain.store.watchedSuite(domain.domain)
        suite.onProblem = { problem in
            Output.printError(problem.message)
        }
    }

    /// Starts observing the domain.
    package func start() {
        let token = suite.changes.addObserver { [weak self] change in
            self?.changed(change.keys)
        }
        state.withLock { $0.observation = token }
    }

    /// Calls `send` with each event from now on, until it returns `false` (the page is gone, or
    /// does not read what it is sent) or ``stopListening(_:)``; `nil` when ``listenerLimit``
    /// pages listen already.
    package func listen(_ send: @escaping @Sendable (Data) -> Bool) -> Int? {
        state.withLock { state in
            guard state.listeners.count < Self.listenerLimit else { return nil }
            state.nextID += 1
            state.listeners[state.nextID] = send
            return state.nextID
        }
    }

    package func stopListening(_ id: Int) {
        _ = state.withLock { $0.listeners.removeValue(forKey: id) }
    }

    package var listenerCount: Int { state.withLock { $0.listeners.count } }

    private func changed(_ keys: Set<String>) {
        let schedules = state.withLock { state in
            state.pending.formUnion(keys)
            defer { state.isScheduled = true }
            return !state.isScheduled
        }
        if schedules {
            queue.async { self.send() }
        }
    }

    private func send() {
        let keys = state.withLock { state in
            defer {
                state.pending = []
                state.isScheduled = false
            }
            return state.pending
        }
        guard !keys.isEmpty else { return }
        let update: EditedDomain.Update
        do {
            update = try domain.update(forKeys: keys)
        } catch {
            Output.printError(error.message)
            return
        }
        let event = Self.event(update)
        let listeners = state.withLock { $0.listeners }
        for (id, send) in listeners where !send(event) {
            stopListening(id)
        }
    }

    /// `update` as a Server-Sent Event named `change` (its JSON is one line).
    package static func event(_ update: EditedDomain.Update) -> Data {
        let json = (try? JSONEncoder().encode(update)) ?? Data("{}".utf8)
        return Data("event: change\ndata: ".utf8) + json + Data("\n\n".utf8)
    }
}
