import Foundation
import Synchronization

/// Reads one pipe to its end on a thread of its own, so that a child never blocks on a full pipe
/// and a test can look at what came so far. Not a `readabilityHandler`: its dispatch source was
/// seen to outlive the file handle and crash libdispatch's event loop.
final class OutputCollector: Sendable {
    private struct State {
        var data = Data()
        var isFinished = false
    }

    private let state = Mutex(State())

    /// Starts reading `descriptor`, which the collector owns and closes at the end of the pipe.
    init(reading descriptor: Int32) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    state.withLock { $0.data.append(contentsOf: buffer[..<count]) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(descriptor)
            state.withLock { $0.isFinished = true }
        }
        thread.start()
    }

    /// Everything read so far.
    var data: Data { state.withLock { $0.data } }

    /// Whether the pipe has ended: every process that could write to it has closed it.
    var isFinished: Bool { state.withLock { $0.isFinished } }

    /// The complete lines read so far, without their line feeds, and whether more may come.
    var lines: (lines: [String], isFinished: Bool) {
        let (data, isFinished) = state.withLock { ($0.data, $0.isFinished) }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return (lines.map(String.init), isFinished)
    }
}
