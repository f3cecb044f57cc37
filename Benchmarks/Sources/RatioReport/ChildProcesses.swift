import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs `executable` to its end with `posix_spawn` and `waitpid`, its output discarded, and
/// returns its wall time and exit status. Foundation's `Process.waitUntilExit()` on Linux notices
/// an exit only at its next poll, tens of milliseconds late: too coarse to time a process with.
func timedRun(_ executable: URL, _ arguments: [String], environment: [String: String]) throws -> (
    time: Duration, status: Int32
) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv + envp { free(pointer) }
    }
    let clock = ContinuousClock()
    let start = clock.now
    var pid: pid_t = 0
    let error = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
    guard error == 0 else {
        throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: executable.path])
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    let time = clock.now - start
    // The low 7 bits hold a signal that ended it; the exit status is the next byte.
    return (time, status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
}
