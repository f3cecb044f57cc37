import DefaultsSyncProtocol
import DefaultsSyncSQL
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import UnixSignals

/// The sync service: a stateless instance over one PostgreSQL database, and over the nodes of its
/// directory when it has some (``NodeDirectory``); run any number of them.
///
/// Serves the WebSocket of ``SyncProtocol`` at `/v1/sync` and `GET /health` (200 while the
/// database answers, 503 otherwise); when given a metrics page and a metrics port, `GET /metrics`
/// on a listener of its own (loopback by default), never on the devices' port. SIGTERM or SIGINT
/// stop it gracefully: it stops accepting, closes every WebSocket normally, and exits. It logs its
/// start (version, address, limits), a refused token (at `notice`, with the user it claimed and the
/// client's address), a device it closes and why, its drain and its stop.
public enum SyncServer {
    /// The server's version, as `--version` prints it and its start is logged.
    public static let version = "1.1.0"

    /// Connections the kernel queues for the devices' port before the instance accepts them
    /// (capped by `net.core.somaxconn`): thousands of devices reconnect at once after a restart,
    /// and past the queue their connections are dropped and tried again.
    static let listenBacklog = 4096

    /// How long a graceful stop may take before the instance's work is cancelled: requests under
    /// way end within ``DatabasePool/transactionLimit``, and devices are sent a close frame.
    static let longestGracefulStop = Duration.seconds(60)
    /// How long the cancelled work then has before the process exits with status 1 rather than
    /// hang (``StopWatchdog``): within systemd's default `TimeoutStopSec` (90 s) altogether.
    static let longestCancelledStop = Duration.seconds(20)

    /// Runs until SIGTERM or SIGINT; `listening` is told the devices' port once it accepts
    /// connections, and `metricsListening` the metrics listener's. A stop that outlasts its
    /// limits ends the process with status 1 (``StopWatchdog``): this is the process's server.
    public static func run(
        _ configuration: SyncServerConfiguration,
        logger: Logger,
        metricsPage: (@Sendable () -> String)? = nil,
        listening: @escaping @Sendable (Int) async -> Void = { _ in },
        metricsListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let tokens = try await AccessTokens(keyFiles: configuration.tokenKeyFiles, policy: configuration.tokenPolicy)
        let openFiles = OpenFilesLimit.raise()
        if let openFiles, openFiles < OpenFilesLimit.warnBelow {
            logger.warning(
                "at most \(openFiles) open files, one per device connection: raise the hard limit (LimitNOFILE=) for more devices"
            )
        }
        let metrics = ServerMetrics()
        let main = try await ServiceNode.open(
            name: nil, url: configuration.databaseURL, configuration: configuration, metrics: metrics, logger: logger)
        let nodes = InstanceNodes(main: main, configuration: configuration, metrics: metrics, logger: logger)
        let reads = BytesBudget(bytesPerSecond: configuration.userReadBytesPerSecond)
        let pushes = BytesBudget(bytesPerSecond: configuration.userPushBytesPerSecond)
        let reconnections = ReconnectionAdmission(
            backOff: ReconnectionAdmission.BackOff(
                first: configuration.slowConsumerBackOff.lowerBound,
                longest: configuration.slowConsumerBackOff.upperBound))

        let limits = configuration.limits
        let idle = TimeAmount(configuration.idleTimeout)
        // A device that asks and never reads holds at most `outboxBytes` and one reply; the fan-out
        // does not wait, so its queue may pass that by one message of the largest size.
        let settings = DeviceConnection.Settings(
            outboxBounds: DeviceOutbox.Bounds(
                bytes: configuration.outboxBytes, hardBytes: configuration.outboxBytes + limits.messageBytes,
                stall: configuration.slowConsumerTimeout),
            pingInterval: TimeAmount(configuration.pingInterval))
        let tls = try tlsContext(configuration)
        // The server's loops are the singleton group's.
        let perLoop = configuration.arrivingConnections(perLoopOf: NIOSingletons.groupLoopCountSuggestion)
        let devices = DeviceChannel(
            tokens: tokens,
            backend: InstanceBackend(
                nodes: nodes, limits: limits, reads: reads, pushes: pushes,
                reconnections: reconnections, metrics: metrics, logger: logger),
            settings: settings, messageBytes: limits.messageBytes, requestDeadline: idle, tls: tls,
            wheels: EventLoopLocal { TimerWheel(eventLoop: $0) },
            arrivals: EventLoopLocal { [perLoop] in ArrivalGate(eventLoop: $0, limit: perLoop, metrics: metrics) },
            health: {
                let healthy = await answers(main.pool, logger: logger)
                return (
                    healthy,
                    "{\"status\":\"\(healthy ? "ok" : "database unavailable")\",\"connections\":\(metrics.currentConnections)}\n"
                )
            },
            metrics: metrics, logger: logger)
        let devicePort = devices.server(
            configuration: ServerConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "defaults-sync-server",
                backlog: Self.listenBacklog),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                logger.notice(
                    "defaults-sync-server \(version) listening on \(configuration.host):\(port)\(tls == nil ? "" : " (TLS)"); \(describe(configuration)), open files \(openFiles.map(String.init) ?? "unknown")"
                )
                await listening(port)
            },
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: nodes)]
        if let metricsPage, let metricsPort = configuration.metricsPort {
            services.append(
                .init(
                    service: metricsListener(
                        page: metricsPage, host: configuration.metricsHost, port: metricsPort, deadline: idle,
                        logger: logger, listening: metricsListening)))
        }
        // Stopped in the reverse order: the drain's log line first, then the devices' port, then
        // the databases' fan-outs and pools. The port's service returns once its listener is
        // closed: Hummingbird closes the connections (each with a close frame) in a task of its
        // own, which the pools' stop does not wait for.
        services.append(.init(service: devicePort))
        let watchdog = StopWatchdog(logger: logger)
        defer { watchdog.cancel() }
        services.append(
            .init(
                service: DrainLog(metrics: metrics, logger: logger, watchdog: watchdog),
                successTerminationBehavior: .ignore))
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = Self.longestGracefulStop
        let group = ServiceGroup(configuration: groupConfiguration)
        try await group.run()
        logger.notice("stopped")
    }

    /// The TLS context of the devices' port, when the configuration names a certificate and a key.
    private static func tlsContext(_ configuration: SyncServerConfiguration) throws -> NIOSSLContext? {
        guard let certificate = configuration.tlsCertificateFile, let key = configuration.tlsKeyFile else {
            return nil
        }
        return try NIOSSLContext(
            configuration: TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))))
    }

    /// What an instance enforces, for its start's log line.
    private static func describe(_ configuration: SyncServerConfiguration) -> String {
        let limits = configuration.limits
        return "values \(limits.valueBytes) B, namespaces \(limits.namespaceBytes) B and \(limits.namespaceKeys) keys, "
            + "messages \(limits.messageBytes) B and \(limits.messagesPerSecond)/s, outbox \(configuration.outboxBytes) B, "
            + "slow consumers closed after \(configuration.slowConsumerTimeout.components.seconds) s, "
            + "requests within \(configuration.idleTimeout.components.seconds) s, "
            + "\(configuration.databaseConnections) database connections, "
            + "\(configuration.userDatabaseShare) per user, "
            + "reads \(configuration.userReadBytesPerSecond) B/s and pushes \(configuration.userPushBytesPerSecond) B/s "
            + "per user"
    }

    /// `GET /metrics` alone, on an address of its own.
    private static func metricsListener(
        page: @escaping @Sendable () -> String, host: String, port: Int, deadline: TimeAmount, logger: Logger,
        listening: @escaping @Sendable (Int) async -> Void
    ) -> some Service {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            ProcessHeap.record()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: page())))
        }
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                RequestDeadlineChannel(
                    inner: HTTP1Channel(
                        responder: responder, configuration: HTTP1Channel.Configuration(idleTimeout: deadline)),
                    deadline: deadline)
            },
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "defaults-sync-server-metrics"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                logger.notice("metrics on http://\(host):\(bound)/metrics")
                await listening(bound)
            },
            logger: logger)
    }

    /// Whether the database answers within two seconds.
    private static func answers(_ pool: DatabasePool, logger: Logger) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await pool.query("SELECT 1", logger: logger)
                    return true
                } catch {
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(2))
                return false
            }
            let answer = await group.next() ?? false
            group.cancelAll()
            return answer
        }
    }
}

/// Logs the start of a graceful stop (SIGTERM or SIGINT) with the connections it closes, and
/// starts the stop's watchdog: the first service the signal reaches, before the server drains.
private struct DrainLog: Service {
    let metrics: ServerMetrics
    let logger: Logger
    let watchdog: StopWatchdog

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled (a service failed and the group cancels the others): no drain to log,
            // but the cancelled work is given an end too.
            watchdog.workCancelled()
            throw error
        }
        watchdog.stopBegan()
        logger.notice("stopping (SIGTERM or SIGINT): draining \(metrics.currentConnections) connection(s)")
    }
}
