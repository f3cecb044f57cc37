@_spi(Testing) import Defaults
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Commands for the trust tests: a value set just before a termination signal, increments from
/// several processes at once, and suites opened over files that are not regular files.
enum TrustCommands {
    /// `trust-set-then-return DIR NAME KEY VALUE [--hour]`: opens a suite in a function, sets KEY without
    /// flushing, prints `ready`, sleeps until a signal interrupts the sleep, then returns from the
    /// function (releasing the suite) and from `main`, racing the termination-signal handler.
    static func setThenReturn(_ arguments: [String]) {
        acceptTerminationSignals()
        setAndSleep(arguments)
    }

    /// `trust-set-then-block DIR NAME KEY VALUE`: sets KEY in a suite whose writes wait an hour,
    /// prints `ready`, then blocks in a way no signal interrupts: only the library's signal
    /// thread can write the value before the signal ends the process.
    static func setThenBlock(_ arguments: [String]) {
        acceptTerminationSignals()
        let suite = FileSuite(
            name: arguments[1], directory: URL(fileURLWithPath: arguments[0], isDirectory: true), arguments: [],
            coalescingDelay: .seconds(3600))
        suite.set(arguments[3], forKey: arguments[2])
        FileSuiteCommands.printFlushed("ready")
        let never = DispatchSemaphore(value: 0)
        while true { never.wait() }
    }

    /// `trust-key-set-then-return DIR NAME KEY VALUE`: as an app writes: a key with a default, in a
    /// suite whose writes wait an hour, set through `Defaults[key]`; prints `ready`, sleeps until
    /// a signal interrupts the sleep, then returns from `main`.
    static func keySetThenReturn(_ arguments: [String]) {
        acceptTerminationSignals()
        let suite = FileSuite(
            name: arguments[1], directory: URL(fileURLWithPath: arguments[0], isDirectory: true), arguments: [],
            coalescingDelay: .seconds(3600))
        let key = Defaults.Key<String>(arguments[2], default: "", suite: suite)
        Defaults[key] = arguments[3]
        FileSuiteCommands.printFlushed("ready")
        sleep(30)
    }

    private static func setAndSleep(_ arguments: [String]) {
        // `--hour`: writes wait an hour, as an app's may, so only a flush writes the value.
        let suite = FileSuite(
            name: arguments[1], directory: URL(fileURLWithPath: arguments[0], isDirectory: true), arguments: [],
            coalescingDelay: arguments.dropFirst(4).first == "--hour"
                ? .seconds(3600) : FileSuite.defaultCoalescingDelay)
        suite.set(arguments[3], forKey: arguments[2])
        FileSuiteCommands.printFlushed("ready")
        // Returns early when the signal arrives: its handler is installed with SA_RESTART, but
        // `sleep` is not restarted.
        sleep(30)
    }

    /// Starts as a process launched from a shell does: the test runner spawns this from a thread
    /// that blocks signals, and a non-interactive shell ignores SIGINT in background jobs.
    static func acceptTerminationSignals() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGTERM, SIGINT] {
            sigaddset(&signals, number)
            signal(number, SIG_DFL)
        }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// `trust-hold-lock PATH`: takes the exclusive `flock` on PATH (creating it), prints `locked`,
    /// then holds it until killed, as a writer that hangs holding a suite's lock would.
    static func holdLock(_ arguments: [String]) {
        let fd = creat(arguments[0], 0o600)  // (`open` is this enum's own command here)
        guard fd >= 0, flock(fd, LOCK_EX) == 0 else { FileSuiteCommands.fail("cannot lock \(arguments[0])") }
        FileSuiteCommands.printFlushed("locked")
        while true { sleep(60) }
    }

    /// `trust-increment DIR NAME KEY COUNT`: adds 1 to the integer KEY, COUNT times, each with
    /// `Defaults.modify`, then prints `ok`.
    static func increment(_ arguments: [String]) {
        let suite = FileSuiteCommands.suite(arguments)
        let key = Defaults.Key<Int>(arguments[2], default: 0, suite: suite)
        guard let count = Int(arguments[3]) else { FileSuiteCommands.fail("bad count") }
        for _ in 0..<count {
            Defaults.modify(key) { $0 += 1 }
        }
        guard suite.problems.isEmpty else { FileSuiteCommands.fail("\(suite.problems)") }
        FileSuiteCommands.printFlushed("ok")
    }

    /// `trust-open DIR NAME`: opens the suite, sets `key` in memory, and prints each problem's
    /// kind and message, then the value read back.
    static func open(_ arguments: [String]) {
        let suite = FileSuiteCommands.suite(arguments)
        suite.set("in memory", forKey: "key")
        for problem in suite.problems {
            FileSuiteCommands.printFlushed("problem \(problem.kind): \(problem.message)")
        }
        FileSuiteCommands.printFlushed("value: \(suite.object(forKey: "key") as? String ?? "(absent)")")
    }

    /// `trust-blocked-signals DIR NAME KEY VALUE`: a program that handles SIGTERM and SIGINT
    /// itself by blocking them in every thread and taking them when they are pending (as a
    /// `signalfd` or an event loop does). Opens the suite after blocking them, sets KEY, prints
    /// `ready`, and when a signal is pending prints `handled N`, flushes, and exits with status 0.
    static func handleBlockedSignals(_ arguments: [String]) {
        acceptTerminationSignals()
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        let suite = FileSuiteCommands.suite(arguments)
        suite.set(arguments[3], forKey: arguments[2])
        FileSuiteCommands.printFlushed("ready")
        // Polled rather than waited for with `sigwait`, which would unblock them while it waits.
        var pending = sigset_t()
        repeat {
            usleep(10_000)
            sigpending(&pending)
        } while sigismember(&pending, SIGTERM) == 0 && sigismember(&pending, SIGINT) == 0
        var received: Int32 = 0
        guard sigwait(&signals, &received) == 0 else { FileSuiteCommands.fail("sigwait failed") }
        FileSuiteCommands.printFlushed("handled \(received)")
        do {
            try suite.flush()
        } catch {
            FileSuiteCommands.fail("\(error)")
        }
        exit(0)
    }

    /// `trust-fork DIR NAME`: opens a suite (installing the termination-signal handler), then
    /// forks a child that only waits for signals, prints `child PID`, and waits for it to end;
    /// prints `child ended by signal N` (or `child exited N`) and exits with status 0.
    static func forkAndWait(_ arguments: [String]) {
        acceptTerminationSignals()
        let suite = FileSuiteCommands.suite(arguments)
        suite.set("parent", forKey: "key")
        do {
            try suite.flush()
        } catch {
            FileSuiteCommands.fail("\(error)")
        }
        let child = fork()
        if child == 0 {
            // Only async-signal-safe calls in the child of a multithreaded process.
            while true {
                pause()
            }
        }
        guard child > 0 else { FileSuiteCommands.fail("fork failed") }
        FileSuiteCommands.printFlushed("child \(child)")
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 {
            guard errno == EINTR else { FileSuiteCommands.fail("waitpid failed") }
        }
        let signal = status & 0x7F
        FileSuiteCommands.printFlushed(
            signal != 0 ? "child ended by signal \(signal)" : "child exited \((status >> 8) & 0xFF)")
        exit(0)
    }

    /// `trust-own-handler DIR NAME`: a program with its own SIGTERM handler, installed before the
    /// first suite is opened. Sets `key`, prints `ready`, and once its handler has run prints
    /// `own handler ran N`, flushes, and exits with status 0.
    static func keepOwnHandler(_ arguments: [String]) {
        acceptTerminationSignals()
        signal(SIGTERM) { number in ownHandlerSignal = number }
        let suite = FileSuiteCommands.suite(arguments)
        suite.set("value", forKey: "key")
        FileSuiteCommands.printFlushed("ready")
        while ownHandlerSignal == 0 {
            usleep(10_000)
        }
        FileSuiteCommands.printFlushed("own handler ran \(ownHandlerSignal)")
        do {
            try suite.flush()
        } catch {
            FileSuiteCommands.fail("\(error)")
        }
        exit(0)
    }

    /// `trust-no-suite-left DIR NAME`: opens a suite, writes a value, releases the suite, prints
    /// `ready` and sleeps, then returns from `main` (at once when a signal interrupts the sleep):
    /// a termination signal must end it by the signal all the same.
    static func sleepWithNoSuiteLeft(_ arguments: [String]) {
        acceptTerminationSignals()
        do {
            let suite = FileSuiteCommands.suite(arguments)
            suite.set("value", forKey: "key")
            try suite.flush()
        } catch {
            FileSuiteCommands.fail("\(error)")
        }
        FileSuiteCommands.printFlushed("ready")
        sleep(60)
    }
}

/// Set by the own handler of `trust-own-handler`.
nonisolated(unsafe) private var ownHandlerSignal: Int32 = 0
