import Dispatch
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
public struct MayBlock: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(BlockingExecutor.shared) { try await function() }
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
