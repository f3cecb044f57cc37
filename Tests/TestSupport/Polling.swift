import Foundation

/// How long a wait lasts before it fails, when the caller does not say. Generous: the machine
/// may be busy, and the deadline only keeps a broken test from hanging; nothing is measured.
public let defaultWaitTimeout: Duration = .seconds(120)

/// The pause between two looks at a condition.
private let pollInterval: Duration = .milliseconds(5)

/// A wait that ended at its deadline: what was awaited and where.
public struct WaitTimeout: Error, CustomStringConvertible {
    public let description: String

    init(_ what: String?, timeout: Duration, fileID: String, line: Int, detail: String? = nil) {
        var description = "Timed out after \(timeout) waiting for \(what ?? "a condition") (\(fileID):\(line))"
        if let detail { description += ": \(detail)" }
        self.description = description
    }
}

/// Looks at `value` until it returns something, and returns that; throws ``WaitTimeout`` naming
/// `what` once `timeout` has passed. The thread sleeps between two looks.
public func poll<Value>(
    _ what: @autoclosure () -> String? = nil,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line,
    _ value: () throws -> Value?
) throws -> Value {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try value() { return value }
        guard ContinuousClock.now < deadline else {
            throw WaitTimeout(what(), timeout: timeout, fileID: fileID, line: line)
        }
        usleep(UInt32(pollInterval / .microseconds(1)))
    }
}

/// Looks at `value` until it returns something, and returns that; throws ``WaitTimeout`` naming
/// `what` once `timeout` has passed. The task sleeps between two looks, leaving its thread to
/// others.
public nonisolated(nonsending) func poll<Value>(
    _ what: @autoclosure () -> String? = nil,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line,
    _ value: () async throws -> Value?
) async throws -> Value {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try await value() { return value }
        guard ContinuousClock.now < deadline else {
            throw WaitTimeout(what(), timeout: timeout, fileID: fileID, line: line)
        }
        try await Task.sleep(for: pollInterval)
    }
}

/// Looks at `value` until it returns something, and returns that; throws ``WaitTimeout`` naming
/// `what` once `timeout` has passed. The task sleeps between two looks, leaving its thread to
/// others.
public nonisolated(nonsending) func poll<Value>(
    _ what: @autoclosure () -> String? = nil,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line,
    _ value: () throws -> Value?
) async throws -> Value {
    // An overload for a synchronous `value`: without it, an async caller would get the thread's
    // form.
    try await poll(what(), timeout: timeout, fileID: fileID, line: line) { () async throws -> Value? in try value() }
}

/// Waits, the thread sleeping, until `condition` holds; throws ``WaitTimeout`` naming `what`
/// once `timeout` has passed.
public func waitUntil(
    _ what: @autoclosure () -> String? = nil,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line,
    _ condition: () throws -> Bool
) throws {
    try poll(what(), timeout: timeout, fileID: fileID, line: line) { try condition() ? () : nil }
}

/// Waits, the task sleeping, until `condition` holds; throws ``WaitTimeout`` naming `what` once
/// `timeout` has passed.
public nonisolated(nonsending) func waitUntil(
    _ what: @autoclosure () -> String? = nil,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line,
    _ condition: () async throws -> Bool
) async throws {
    try await poll(what(), timeout: timeout, fileID: fileID, line: line) { try await condition() ? () : nil }
}

/// Waits, the task sleeping, until `condition` holds; throws ``WaitTimeout`` naming `what` once
/// `timeout` has passed.
public nonisolated(nonsending) func waitUntil(
    _ what: @autoclosure () -> String? = nil,
    timeout: Duration = defaultWaitTimeout,
    fileID: String = #fileID,
    line: Int = #line,
    _ condition: () throws -> Bool
) async throws {
    try await poll(what(), timeout: timeout, fileID: fileID, line: line) { () async throws -> Void? in
        try condition() ? () : nil
    }
}
