#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The open files an instance may hold, each device's connection being one: raised at start from
/// the soft limit to the hard one, as nginx's `worker_rlimit_nofile` and Go's runtime do, since a
/// soft limit of 1,024 (the usual default) would refuse the 1,000th device.
enum OpenFilesLimit {
    /// Below this after raising, the start warns: an operator expecting thousands of devices
    /// should raise the hard limit (`LimitNOFILE=` in a systemd unit).
    static let warnBelow: UInt64 = 4096

    /// Raises the soft limit to the hard one; returns the limit now in force (`nil` if unknown).
    static func raise() -> UInt64? {
        var limit = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }
}
