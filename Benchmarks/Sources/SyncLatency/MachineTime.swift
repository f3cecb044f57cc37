import Foundation

/// The machine's CPU time as `/proc/stat` counts it, so that a run can say what the machine was
/// doing meanwhile: on a virtual machine the hypervisor may take a third of the CPU (steal), and a
/// latency measured then is the machine's, not the service's.
struct MachineTime {
    var busy = 0
    var idle = 0
    var stolen = 0

    /// The counters now (all zero where `/proc/stat` cannot be read).
    static func now() -> Self {
        let stat = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
        // The first line sums every CPU: "cpu user nice system idle iowait irq softirq steal ...".
        guard let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return Self() }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard ticks.count >= 8 else { return Self() }
        return Self(
            busy: ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6], idle: ticks[3] + ticks[4], stolen: ticks[7])
    }

    /// The shares of the time from `start` to `end`, in percent (`nan` where nothing was counted).
    static func shares(from start: Self, to end: Self) -> (busy: Double, stolen: Double, idle: Double) {
        let busy = Double(end.busy - start.busy)
        let idle = Double(end.idle - start.idle)
        let stolen = Double(end.stolen - start.stolen)
        let total = busy + idle + stolen
        guard total > 0 else { return (.nan, .nan, .nan) }
        return (100 * busy / total, 100 * stolen / total, 100 * idle / total)
    }
}
