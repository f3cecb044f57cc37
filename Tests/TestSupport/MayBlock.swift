import Dispatch
import Foundation
import Synchronization
import Testing

/// A trait for tests that wait synchronously (a child process run to its end, a script, a file
/// lock, a thread's sleep): each runs with a task executor whose threads are its own.
///
/// Swift Testing runs every test on the cooperative pool, which has one thread per core. Two
/// synchronous tests waiting for children on a 2-core machine hold both threads, and then no
/// task of any other test runs: a PostgreSQL answer waits, a deadline passes, a test fails for
/// no fault of its code (seen in CI). Under this trait a test's body, and the child tasks it
/// starts in structured concurrency, run on threads that libdispatch gives at once however many
/// others are blocked. (Unstructured `Task {}`s run on the pool, as the preference is not theirs.)
///
/// ```swift
/// @Suite(.mayBlock) struct CommandTests {
///     @Test func readsWhatItWrote() throws { _ = try ChildProcess.run("/bin/true") }
/// }
/// ```
///
/// Such tests are also the ones that start processes and servers: at most one per core of them
/// runs at once (``BlockingTurns``), as the pool let run before, so that the machine is not asked
/// for much more than it has and no other test's deadline passes for want of a core. A test with
/// a time limit does not wait for a turn, which its limit would count.
public struct MayBlock: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Once per test, however many of its suites carry the trait.
        guard !BlockingTurns.isHeld, test.timeLimit == nil else {
            return try await withTaskExecutorPreference(BlockingExecutor.shared) { try await function() }
        }
        await BlockingTurns.shared.take()
        defer { BlockingTurns.shared.give() }
        try await BlockingTurns.$isHeld.withValue(true) {
            try await withTaskExecutorPreference(BlockingExecutor.shared) { try await function() }
        }
    }
}

/// Turns for tests that may block, one per core, given in the order asked.
final class BlockingTurns: Sendable {
    static let shared = BlockingTurns(count: max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// Whether the current task's test holds a turn.
    @TaskLocal static var isHeld = false

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(free: count))
    }

    func take() async {
        await withCheckedContinuation { continuation in
            let isTaken = state.withLock { state -> Bool in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if isTaken { continuation.resume() }
        }
    }

    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

extension Trait where Self == MayBlock {
    /// The tests may wait synchronously: they run on threads of their own (``MayBlock``).
    public static var mayBlock: Self { Self() }
}

/// Runs each job on a serial dispatch queue of its own. Serial queues are "overcommit": libdispatch
/// gives each a thread (reused once idle) whenever the others are busy or blocked, where a
/// concurrent queue, like the cooperative pool, waits for a thread to come free or for its monitor
/// to add one, about one a second.
final class BlockingExecutor: TaskExecutor {
    static let shared = BlockingExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue(label: "TestSupport.BlockingExecutor").async { job.runSynchronously(on: executor) }
    }
}
