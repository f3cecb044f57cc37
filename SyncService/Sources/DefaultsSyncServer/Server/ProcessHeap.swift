import CProcessHeap
import Metrics

/// The allocator's heap, read at each scrape of `/metrics`: what the instance's connections,
/// outboxes and caches hold, apart from the stacks, the binary and the kernel's socket buffers
/// that the resident size also counts (glibc's `mallinfo2`; 0 with another C library, or with
/// glibc before 2.33).
enum ProcessHeap {
    private static let inUse = Gauge(label: "defaults_sync_heap_in_use_bytes")
    private static let held = Gauge(label: "defaults_sync_heap_held_bytes")

    static func record() {
        let totals = c_process_heap_totals()
        inUse.record(Int(totals.inUse))
        held.record(Int(totals.held))
    }
}
