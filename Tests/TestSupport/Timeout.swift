/// Runs `body` and returns what it returns; throws ``WaitTimeout`` naming `what` when it has not
/// returned after `timeout`, and cancels it. For a body that waits on something of its own (an
/// async sequence) rather than on a condition to poll.
public nonisolated(nonsending) func withTimeout<Value: Sendable>(
    _ what: String? = nil,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line,
    _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw WaitTimeout(what, timeout: timeout, fileID: fileID, line: line)
        }
        return value
    }
}
