import Logging

extension Defaults {
    /// Where the library reports problems it handles itself (a corrupt file moved aside, a value
    /// that could not be serialized). Route it with `LoggingSystem.bootstrap` as usual.
    public static let logger = StorageEnvironment.logger
}
