import DefaultsPostgres
import DefaultsSyncProtocol
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import UnixSignals

/// The sync service: a stateless instance over one PostgreSQL database; run any number of them.
///
/// Serves the WebSocket of ``SyncProtocol`` at `/v1/sync`, `GET /health` (200 while the database
/// answers, 503 otherwise) and, when given a metrics page, `GET /metrics`. SIGTERM or SIGINT stop
/// it gracefully: it stops accepting, closes every WebSocket normally, and exits.
public enum SyncServer {
    /// Runs until SIGTERM or SIGINT; `listening` is told the port once it accepts connections.
    public static func run(
        _ configuration: SyncServerConfiguration,
        logger: Logger,
        metricsPage: (@Sendable () -> String)? = nil,
        listening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let tokens = try await AccessTokens(keyFile: configuration.tokenKeyFile)
        let database = try PostgresURL(configuration.databaseURL)
        let connectionConfiguration = try database.connectionConfiguration()
        try await prepare(database, configuration: connectionConfiguration, logger: logger)

        var clientConfiguration = database.clientConfiguration()
        clientConfiguration.options.maximumConnections = configuration.databaseConnections
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        let metrics = ServerMetrics()
        let storage = ServiceStorage(client: client, limits: configuration.limits, logger: logger)
        let fanout = ChangeFanout(
            storage: storage, listenerConfiguration: connectionConfiguration, metrics: metrics, logger: logger)

        let router = Router()
        router.get("/health") { _, _ -> Response in
            let healthy = await answers(client, logger: logger)
            let body =
                "{\"status\":\"\(healthy ? "ok" : "database unavailable")\",\"connections\":\(metrics.currentConnections)}\n"
            return Response(
                status: healthy ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
        if let metricsPage {
            router.get("/metrics") { _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: metricsPage())))
            }
        }

        let limits = configuration.limits
        let idle = TimeAmount.milliseconds(
            configuration.idleTimeout.components.seconds * 1000
                + configuration.idleTimeout.components.attoseconds / 1_000_000_000_000_000)
        let upgrade = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: HTTP1Channel.Configuration(idleTimeout: idle),
            ws: WebSocketServerConfiguration(
                maxFrameSize: limits.messageBytes, autoPing: .enabled(timePeriod: configuration.pingInterval)))
        let shouldUpgrade:
            @Sendable (HTTPRequest, any Channel, Logger) async throws -> ShouldUpgradeResult<
                WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
            > = { request, _, logger in
                guard request.path?.split(separator: "?").first.map(String.init) == SyncProtocol.path else {
                    return .dontUpgrade
                }
                let claims: Result<TokenClaims, AccessTokenError>
                if let header = request.headerFields[.authorization], header.hasPrefix("Bearer ") {
                    do throws(AccessTokenError) {
                        claims = .success(try await tokens.verify(String(header.dropFirst("Bearer ".count))))
                    } catch {
                        claims = .failure(error)
                    }
                } else {
                    claims = .failure(.missing)
                }
                // Upgraded even when refused, so that the device reads why in the close frame.
                return .upgrade([:]) { inbound, outbound, _ in
                    switch claims {
                    case .failure(let error):
                        metrics.refusedToken()
                        logger.info("refused a connection: \(error)")
                        // Not at once: a close frame that arrives with the upgrade's response can be
                        // missed by a client still setting up (seen with WSClient on a busy machine).
                        try await Task.sleep(for: .milliseconds(100))
                        try await outbound.close(.policyViolation, reason: error.description)
                    case .success(let claims):
                        let session = DeviceSession(
                            claims: claims, storage: storage, fanout: fanout, limits: limits, metrics: metrics,
                            logger: logger)
                        try await session.run(inbound: inbound, outbound: outbound)
                    }
                }
            }
        var server = HTTPServerBuilder { responder in
            RequestDeadlineChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, configuration: upgrade, shouldUpgrade: shouldUpgrade),
                deadline: idle)
        }
        if let certificate = configuration.tlsCertificateFile, let key = configuration.tlsKeyFile {
            let tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            server = try .tls(server, tlsConfiguration: tls)
        }
        let app = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "defaults-sync-server"),
            services: [client, fanout],
            onServerRunning: { channel in
                await listening(channel.localAddress?.port ?? configuration.port)
            },
            logger: logger)
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    /// Migrates the schema, and warns when row-level security cannot hold the server's role.
    private static func prepare(
        _ database: PostgresURL, configuration: PostgresConnection.Configuration, logger: Logger
    ) async throws {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        } catch {
            throw ServiceStorageError("cannot connect to \(database): \(String(reflecting: error))")
        }
        defer { Task { try? await connection.close() } }
        try await ServiceSchema.migrator.migrate(connection, logger: logger)
        if try await ServiceSchema.bypassesRowSecurity(connection, logger: logger) {
            logger.warning(
                "\(database.user) is a superuser or has BYPASSRLS: row-level security does not hold it; connect as an ordinary role"
            )
        }
    }

    /// Whether the database answers within two seconds.
    private static func answers(_ client: PostgresClient, logger: Logger) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await client.query("SELECT 1", logger: logger)
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
        try await ServiceSchema.warnOfOtherRoles(connection, logger: logger)
