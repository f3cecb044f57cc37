import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Flushes every suite when the process is asked to stop with `SIGTERM` or `SIGINT`, then lets
/// the signal end the process as it would have.
///
/// Installed when the first write of any suite is scheduled, and only for a signal whose disposition is
/// still the default: a process that handles these signals itself keeps its handlers, and should
/// call ``Defaults/flushAll()`` when it shuts down (not from inside a signal handler, where
/// taking locks is unsafe: from a `DispatchSource` signal source, a service-lifecycle shutdown
/// hook, or the thread its handler wakes).
///
/// The handler itself only restores the default disposition (so a second signal ends the
/// process at once) and writes the signal number to a pipe; a thread reading the pipe flushes,
/// then raises the signal again.
enum TerminationSignals {
    static let signals: [Int32] = [SIGTERM, SIGINT]

    private static let isInstalled = Mutex(false)

    /// Whether the final flush has returned. Held for the whole flush: the signal thread and the
    /// exit path (`main` returning because the signal interrupted it) may both get there, and
    /// whichever comes second waits for the first's flush to return before it ends the process.
    private static let finalFlush = Mutex(false)

    static func installIfDefault() {
        isInstalled.withLock { isInstalled in
            guard !isInstalled else { return }
            isInstalled = true
            install()
        }
    }

    private static func install() {
        let toInstall = signals.filter(hasDefaultDisposition)
        guard !toInstall.isEmpty else { return }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        // Written to by the handler, so never blocking it; a full pipe only loses repeat signals.
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        terminationSignalPipe = fds[1]
        terminationSignalOwner = getpid()
        let readFD = fds[0]
        // The program may return from `main` (or call `exit`) while the thread below flushes,
        // for instance when the signal interrupts a `sleep`: end it by the signal all the same, so
        // that its parent (a shell running a script) sees it was stopped, not that it succeeded.
        atexit { TerminationSignals.endIfSignalled() }
        let thread = Thread { flushThenRaise(readingFrom: readFD) }
        thread.name = "swift-defaults termination signals"
        thread.start()
        for signal in toInstall {
            var action = sigaction()
            #if canImport(Darwin)
            action.__sigaction_u.__sa_handler = handleTerminationSignal
            #else
            action.__sigaction_handler.sa_handler = handleTerminationSignal
            #endif
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            // Checked again at the last moment, in case the process installed its own meanwhile.
            if hasDefaultDisposition(signal) {
                sigaction(signal, &action, nil)
            }
        }
    }

    /// Whether `signal` still does what the system does by default (neither ignored nor handled).
    static func hasDefaultDisposition(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        #if canImport(Darwin)
        let handler = current.__sigaction_u.__sa_handler
        #else
        let handler = current.__sigaction_handler.sa_handler
        #endif
        return handler == nil && current.sa_flags & SA_SIGINFO == 0
    }

    private static func flushThenRaise(readingFrom fd: Int32) {
        // The signals reach the process through the threads the program lets take them. This
        // thread never takes them: unblocking them here would take them from a program that
        // blocks them everywhere to handle them itself (`signalfd`, an event loop).
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals {
            sigaddset(&mask, signal)
        }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        var signal: Int32 = 0
        while true {
            let count = withUnsafeMutableBytes(of: &signal) { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count == MemoryLayout<Int32>.size else { return }
            flushOnce()
            resetToDefault(signal)
            // To the process, not this thread (which is what `raise` targets): it ends the
            // process as the original signal would have.
            kill(getpid(), signal)
        }
    }

    /// At exit: if a termination signal was received, flushes, then ends the process by it.
    private static func endIfSignalled() {
        let signal = receivedTerminationSignal
        guard signal != 0 else { return }
        flushOnce()
        resetToDefault(signal)
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, signal)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        // To this thread: delivered before `raise` returns.
        raise(signal)
    }

    /// Flushes every suite, once, whoever asks first; a second caller returns only once that
    /// flush has returned, so that neither ends the process while the other still writes.
    private static func flushOnce() {
        finalFlush.withLock { isDone in
            guard !isDone else { return }
            SuiteRegistry.flushAll(reportingTo: StorageEnvironment.logger)
            isDone = true
        }
    }

    static func resetToDefault(_ signal: Int32) {
        var action = sigaction()
        sigemptyset(&action.sa_mask)
        sigaction(signal, &action, nil)
    }
}

/// The pipe the signal handler writes to; set once before the handler is installed.
/// `nonisolated(unsafe)`: written once, before any handler that reads it can run, and read only
/// from the handler afterwards.
nonisolated(unsafe) private var terminationSignalPipe: Int32 = -1

/// The process that installed the handler; a child forked from it inherits the handler and the
/// pipe, but not the thread that reads it. Set with the pipe, under the same terms.
nonisolated(unsafe) private var terminationSignalOwner: pid_t = 0

/// The termination signal received, if any, for the exit handler; set by the signal handler.
nonisolated(unsafe) private var receivedTerminationSignal: Int32 = 0

/// The signal handler: only async-signal-safe calls.
private func handleTerminationSignal(_ signal: Int32) {
    let savedErrno = errno
    // A second signal during the flush ends the process at once.
    var action = sigaction()
    sigemptyset(&action.sa_mask)
    sigaction(signal, &action, nil)
    guard getpid() == terminationSignalOwner else {
        // A forked child: the pipe would wake its parent's thread (which would end the parent).
        // End this process as the signal would have, once the handler returns and unblocks it.
        kill(getpid(), signal)
        errno = savedErrno
        return
    }
    receivedTerminationSignal = signal
    var number = signal
    _ = withUnsafeBytes(of: &number) { write(terminationSignalPipe, $0.baseAddress, $0.count) }
    errno = savedErrno
}
