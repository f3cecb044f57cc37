/// A change to one or more keys of a suite.
public struct SuiteChange: Sendable, Hashable {
    /// Where a change came from.
    public enum Origin: Sendable, Hashable {
        /// A write made in this process.
        case thisProcess
        /// A write made by another process, seen through the suite's storage.
        case otherProcess
        /// A value another machine wrote, applied by ``Defaults/iCloud``.
        case sync
    }

    /// The keys whose values (as a read returns them) changed.
    public var keys: Set<String>
    /// Where the change came from.
    public var origin: Origin

    /// Creates a change event.
    public init(keys: Set<String>, origin: Origin = .thisProcess) {
        self.keys = keys
        self.origin = origin
    }
}
