import ArgumentParser
import DefaultsSyncProtocol
import DefaultsSyncServer
import Foundation
import Logging
import Metrics
import Prometheus

@main
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaults-sync-server",
        abstract: "Syncs each user's settings across their machines, for apps using swift-defaults.",
        discussion: """
            Every option of `serve` can also come from the environment: DEFAULTS_SYNC_<OPTION>, in \
            capitals with underscores (DEFAULTS_SYNC_DATABASE_URL, DEFAULTS_SYNC_PORT, ...). An option \
            on the command line wins.
            """,
        version: SyncServer.version,
        subcommands: [Serve.self, Token.self, Revoke.self, Nodes.self])
}

/// An option's value: the command line's, else the environment's `DEFAULTS_SYNC_<NAME>`.
func setting(_ given: String?, _ name: String) -> String? {
    given ?? ProcessInfo.processInfo.environment["DEFAULTS_SYNC_\(name)"].flatMap { $0.isEmpty ? nil : $0 }
}

func number<Value: LosslessStringConvertible>(_ given: String?, _ name: String, default value: Value) throws -> Value {
    guard let text = setting(given, name) else { return value }
    guard let parsed = Value(text) else {
        throw ValidationError(
            "--\(optionName(name)): \"\(text)\" is not a number")
    }
    return parsed
}

/// The option an environment variable's name stands for (`PING_INTERVAL`: `ping-interval`).
func optionName(_ name: String) -> String {
    name.lowercased().replacingOccurrences(of: "_", with: "-")
}

/// A duration option in seconds: more than 0, at most a day (so that it converts without a trap).
func seconds(_ given: String?, _ name: String, default value: Double) throws -> Duration {
    let seconds = try number(given, name, default: value)
    guard seconds > 0, seconds <= 86_400 else {
        throw ValidationError(
            "--\(optionName(name)): give seconds, more than 0 and at most 86400")
    }
    return .milliseconds(Int((seconds * 1000).rounded(.up)))
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Runs one instance of the service.")

    @OptionGroup var database: DatabaseOptions
    @Option(help: "The address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "The port (default 8080; 0 picks a free one).") var port: String?
    @OptionGroup var tokens: TokenOptions
    @Option(help: "A PEM certificate chain, to serve wss:// directly.") var tlsCertificate: String?
    @Option(help: "The PEM private key of --tls-certificate.") var tlsKey: String?
    @Option(help: "The largest value, in bytes (default 1048576).") var maxValueBytes: String?
    @Option(help: "The most bytes per user and namespace: names, values and origins (default 1048576).")
    var maxNamespaceBytes: String?
    @Option(help: "The most keys per user and namespace, unexpired removals included (default 1024).")
    var maxNamespaceKeys: String?
    @Option(help: "The longest key name, in bytes (default 512; over 2000, PostgreSQL's index may refuse some).")
    var maxKeyBytes: String?
    @Option(help: "The longest origin a device signs its changes with, in bytes (default 128).")
    var maxOriginBytes: String?
    @Option(help: "The most namespaces a user may write to (default 64).") var maxUserNamespaces: String?
    @Option(help: "The most connections of one user to this instance (default 32).") var maxUserConnections: String?
    @Option(help: "Days after which removals are forgotten, 1 to 36500 (default 90).") var tombstoneDays: String?
    @Option(help: "The largest message, in bytes (default 4194304).") var maxMessageBytes: String?
    @Option(help: "Messages a second per user on this instance, on average (default 50).") var rateLimit: String?
    @Option(help: "Seconds between pings; a device that does not answer is disconnected (default 30).")
    var pingInterval: String?
    @Option(help: "Seconds a connection has to complete its request (the upgrade); then it is closed (default 30).")
    var idleTimeout: String?
    @Option(help: "Bytes waiting for one device past which its messages are not read (default 524288).")
    var maxOutboxBytes: String?
    @Option(help: "Seconds a device may take nothing sent to it; then it is closed as a slow consumer (default 10).")
    var slowConsumerTimeout: String?
    @Option(help: "The metrics listener's port, GET /metrics for Prometheus (default: none; 0 picks a free one).")
    var metricsPort: String?
    @Option(help: "The address of the metrics listener (default 127.0.0.1).") var metricsHost: String?
    @Option(help: "The most database connections of this instance (default 20).") var databaseConnections: String?
    @Option(
        help: "The most device connections arriving at once, the others waiting their turn (default 16 per core).")
    var arrivingConnections: String?
    @Option(help: "The most database connections one user's requests hold at once (default: a quarter of the pool).")
    var maxUserDatabaseConnections: String?
    @Option(help: "Bytes a second of answers to one user's reads on this instance, on average (default 2097152).")
    var maxUserReadBytesPerSecond: String?
    @Option(help: "Bytes a second one user's pushes fan out on this instance, on average (default 2097152).")
    var maxUserPushBytesPerSecond: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical (default info).") var logLevel: String?

    func run() async throws {
        var configuration = SyncServerConfiguration(
            databaseURL: try database.url(), tokenKeyFiles: try tokens.keyFiles())
        configuration.tokenPolicy = try tokens.policy()
        configuration.host = setting(host, "HOST") ?? configuration.host
        configuration.port = try number(port, "PORT", default: configuration.port)
        configuration.tlsCertificateFile = setting(tlsCertificate, "TLS_CERTIFICATE")
        configuration.tlsKeyFile = setting(tlsKey, "TLS_KEY")
        guard (configuration.tlsCertificateFile == nil) == (configuration.tlsKeyFile == nil) else {
            throw ValidationError("Give both --tls-certificate and --tls-key, or neither")
        }
        var limits = configuration.limits
        limits.valueBytes = try number(maxValueBytes, "MAX_VALUE_BYTES", default: limits.valueBytes)
        limits.namespaceBytes = try number(maxNamespaceBytes, "MAX_NAMESPACE_BYTES", default: limits.namespaceBytes)
        limits.namespaceKeys = try number(maxNamespaceKeys, "MAX_NAMESPACE_KEYS", default: limits.namespaceKeys)
        limits.messageBytes = try number(maxMessageBytes, "MAX_MESSAGE_BYTES", default: limits.messageBytes)
        limits.messagesPerSecond = try number(rateLimit, "RATE_LIMIT", default: limits.messagesPerSecond)
        limits.keyBytes = try number(maxKeyBytes, "MAX_KEY_BYTES", default: limits.keyBytes)
        limits.originBytes = try number(maxOriginBytes, "MAX_ORIGIN_BYTES", default: limits.originBytes)
        limits.userNamespaces = try number(maxUserNamespaces, "MAX_USER_NAMESPACES", default: limits.userNamespaces)
        limits.userConnections = try number(
            maxUserConnections, "MAX_USER_CONNECTIONS", default: limits.userConnections)
        limits.tombstoneDays = try number(tombstoneDays, "TOMBSTONE_DAYS", default: limits.tombstoneDays)
        guard limits.valueBytes > 0, limits.namespaceBytes > 0, limits.namespaceKeys > 0,
            limits.messageBytes >= 1024, limits.messagesPerSecond >= 0.001,
            limits.messagesPerSecond <= 1_000_000, limits.keyBytes > 0, limits.originBytes > 0,
            limits.userNamespaces > 0, limits.userConnections > 0
        else {
            throw ValidationError(
                "Limits must be positive, a message at least 1024 bytes, and --rate-limit from 0.001 to 1000000")
        }
        guard ServiceLimits.tombstoneDaysAllowed.contains(limits.tombstoneDays) else {
            throw ValidationError(
                "--tombstone-days must be from 1 to \(ServiceLimits.tombstoneDaysAllowed.upperBound) (100 years)")
        }
        configuration.limits = limits
        configuration.pingInterval = try seconds(pingInterval, "PING_INTERVAL", default: 30)
        configuration.idleTimeout = try seconds(idleTimeout, "IDLE_TIMEOUT", default: 30)
        configuration.databaseConnections = try number(
            databaseConnections, "DATABASE_CONNECTIONS", default: configuration.databaseConnections)
        guard configuration.databaseConnections > 0 else {
            throw ValidationError("--database-connections must be at least 1")
        }
        if setting(arrivingConnections, "ARRIVING_CONNECTIONS") != nil {
            let arriving = try number(arrivingConnections, "ARRIVING_CONNECTIONS", default: 0)
            guard arriving > 0 else { throw ValidationError("--arriving-connections must be at least 1") }
            configuration.arrivingConnections = arriving
        }
        if setting(maxUserDatabaseConnections, "MAX_USER_DATABASE_CONNECTIONS") != nil {
            let share = try number(maxUserDatabaseConnections, "MAX_USER_DATABASE_CONNECTIONS", default: 0)
            guard share > 0, share <= configuration.databaseConnections else {
                throw ValidationError("--max-user-database-connections must be from 1 to --database-connections")
            }
            configuration.userDatabaseConnections = share
        }
        configuration.userReadBytesPerSecond = try number(
            maxUserReadBytesPerSecond, "MAX_USER_READ_BYTES_PER_SECOND", default: configuration.userReadBytesPerSecond)
        configuration.userPushBytesPerSecond = try number(
            maxUserPushBytesPerSecond, "MAX_USER_PUSH_BYTES_PER_SECOND", default: configuration.userPushBytesPerSecond)
        guard configuration.userReadBytesPerSecond > 0, configuration.userPushBytesPerSecond > 0 else {
            throw ValidationError(
                "--max-user-read-bytes-per-second and --max-user-push-bytes-per-second must be positive")
        }
        configuration.outboxBytes = try number(maxOutboxBytes, "MAX_OUTBOX_BYTES", default: configuration.outboxBytes)
        guard configuration.outboxBytes >= 1024 else {
            throw ValidationError("--max-outbox-bytes must be at least 1024")
        }
        configuration.slowConsumerTimeout = try seconds(slowConsumerTimeout, "SLOW_CONSUMER_TIMEOUT", default: 10)
        if setting(metricsPort, "METRICS_PORT") != nil {
            configuration.metricsPort = try number(metricsPort, "METRICS_PORT", default: 0)
        }
        configuration.metricsHost = setting(metricsHost, "METRICS_HOST") ?? configuration.metricsHost

        let levelName = setting(logLevel, "LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("--log-level: \"\(levelName)\" is not a log level")
        }
        #if canImport(Glibc)
        // Buffers of 128 KB and more (a large value, a reply) are mapped and given back when
        // freed, not kept in glibc's arenas: otherwise the threshold grows to the largest one
        // freed, and the memory of many devices' replies stays resident long after they went.
        // (mallopt is not in Swift's Glibc module; M_MMAP_THRESHOLD is -3 in malloc.h.)
        if let mallopt = dlsym(nil, "mallopt") {
            _ = unsafeBitCast(mallopt, to: (@convention(c) (Int32, Int32) -> Int32).self)(-3, 128 * 1024)
        }
        #endif
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "defaults-sync-server")
        logger.logLevel = level

        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let (host, metricsHost) = (configuration.host, configuration.metricsHost)
        try await SyncServer.run(
            configuration, logger: logger, metricsPage: { registry.emitToString() },
            listening: { port in
                // Scripts and tests read the port from this line on stdout (and the metrics
                // listener's from its own, `metrics on`, before or after it).
                FileHandle.standardOutput.write(Data("listening on \(host):\(port)\n".utf8))
            },
            metricsListening: { port in
                FileHandle.standardOutput.write(Data("metrics on \(metricsHost):\(port)\n".utf8))
            })
    }
}
