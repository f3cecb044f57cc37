import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `peak-memory PROGRAM [ARGUMENTS…]`: runs PROGRAM with this process's input, output and
/// environment, then writes `peak-resident-bytes: N` as the last line of the standard error and
/// exits as PROGRAM did.
///
/// Why a process between the test and the program: Linux counts in a process's `ru_maxrss` the
/// resident memory of the process it was started from (`execve` after `vfork` keeps the parent's
/// high-water mark), so a program started straight from a large test runner would seem as large
/// as the runner. Started from this small process, it is measured from this one's few megabytes.
enum PeakMemoryCommand {
    static func run(_ arguments: [String]) -> Never {
        guard let program = arguments.first else {
            FileHandle.standardError.write(Data("usage: peak-memory <program> [arguments…]\n".utf8))
            exit(64)
        }
        var child: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer {
            for argument in argv { free(argument) }
        }
        let spawned = posix_spawn(&child, program, nil, nil, argv, environ)
        guard spawned == 0 else {
            FileHandle.standardError.write(
                Data("peak-memory: cannot start \(program): \(String(cString: strerror(spawned)))\n".utf8))
            exit(127)
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child, &status, 0, &usage) == -1, errno == EINTR {}
        // Linux reports kilobytes.
        FileHandle.standardError.write(Data("peak-resident-bytes: \(Int(usage.ru_maxrss) * 1024)\n".utf8))
        let signal = status & 0x7F
        exit(signal == 0 ? (status >> 8) & 0xFF : 128 + signal)
    }
}
