import Foundation

#if canImport(Glibc)
import Glibc
#endif

// The floor under P4: the system calls of a durable replace of a file of the same size, with no
// encoding, no lock and no bookkeeping, each step timed on its own. A flush cannot be faster than
// this and stay durable; the difference is what the library adds.

/// Medians and 90th percentiles, in order: create + write, fsync of the file, rename over the
/// file, fsync of the directory, and the whole replace.
struct DurableWriteSteps {
    var steps: [(name: String, median: Duration, p90: Duration)]

    var description: String {
        steps.map { "\($0.name) \(format($0.median)) (p90 \(format($0.p90)))" }.joined(separator: ", ")
    }

    var total: Duration { steps.last?.median ?? .zero }
}

/// Replaces `directory/floor.plist` with `size` bytes `count` times, durably, as `AtomicFileWrite`
/// does (a temporary file, `fsync`, `rename`, `fsync` of the directory).
func durableWriteFloor(directory: URL, size: Int, count: Int) -> DurableWriteSteps {
    let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: size)
    let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    defer { close(directoryFD) }
    var samples: [[Duration]] = Array(repeating: [], count: 5)
    for _ in 0..<count {
        let start = ContinuousClock.now
        let fd = openat(directoryFD, ".floor.tmp", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let written = ContinuousClock.now
        fsync(fd)
        let synced = ContinuousClock.now
        renameat(directoryFD, ".floor.tmp", directoryFD, "floor.plist")
        let renamed = ContinuousClock.now
        fsync(directoryFD)
        let end = ContinuousClock.now
        close(fd)
        samples[0].append(written - start)
        samples[1].append(synced - written)
        samples[2].append(renamed - synced)
        samples[3].append(end - renamed)
        samples[4].append(end - start)
    }
    let names = ["create + write", "fsync", "rename", "fsync of the directory", "in all"]
    return DurableWriteSteps(
        steps: zip(names, samples).map { name, values in
            let sorted = values.sorted()
            return (name, sorted[sorted.count / 2], sorted[sorted.count * 9 / 10])
        })
}
