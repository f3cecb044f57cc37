import Defaults
import DefaultsSyncClient
import Foundation
import NIOSSL
import Synchronization
import TestSupport
import Testing

/// The deployment article (`DeployingTheSyncService.md`) run as written: its shell blocks in one
/// shell, in order, its nginx block as nginx's configuration, and two devices connected as its
/// Swift block connects them, syncing through nginx over TLS. Only the substitutions of
/// ``substitutions(for:)`` change its text; what needs root's package installation or systemd is
/// checked instead of run.
@Suite("The deployment article")
struct DeploymentArticleTests {
    static let hasOpenSSL = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
    static let dpkgQuery = ["/usr/bin/dpkg-query", "/bin/dpkg-query"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let isRoot = getuid() == 0
    static let repository = DeploymentArticle.repository.path

    /// Where this test's machine differs from the article's fresh Debian: its own directory instead
    /// of `/etc` and `/usr/local/bin`, free ports, and its own PostgreSQL cluster.
    struct Machine {
        let root: String
        let postgresDirectory: String
        let postgresPort: Int
        /// For the article's 8081 and 8082.
        let instancePorts: [Int]
        /// For the article's 9081 and 9082.
        let metricsPorts: [Int]
        /// For the article's 443.
        let tlsPort: Int

        init(root: String, postgresDirectory: String, postgresPort: Int) throws {
            self.root = root
            self.postgresDirectory = postgresDirectory
            self.postgresPort = postgresPort
            instancePorts = [try PostgresCluster.freePort(), try PostgresCluster.freePort()]
            metricsPorts = [try PostgresCluster.freePort(), try PostgresCluster.freePort()]
            tlsPort = try PostgresCluster.freePort()
        }

        /// nginx with this machine's stand-in for Debian's `/etc/nginx/nginx.conf`.
        var nginx: String { "nginx -p \(root)/nginx/ -c \(root)/nginx/nginx.conf" }

        /// The shell's environment: the installed server first on `PATH`, and `psql` pointed at the
        /// test's cluster (Debian's answers on its default socket, which this one does not use).
        var environment: [String: String] {
            [
                "PATH": "\(root)/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                "PGHOST": postgresDirectory, "PGPORT": "\(postgresPort)",
            ].merging(isRoot ? [:] : ["PGUSER": "postgres"]) { $1 }
        }

        /// What Debian's packages leave on a fresh machine and the article relies on:
        /// `/usr/local/bin`, `/etc/ssl/certs` and `/etc/ssl/private` (openssl), and nginx's
        /// `nginx.conf`, which includes `conf.d/*.conf` inside its `http` block.
        func prepare() throws {
            for folder in ["bin", "ssl/certs", "ssl/private", "nginx/conf.d", "nginx/logs"] {
                try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)
            }
            let configuration = """
                daemon off;
                worker_processes 1;
                pid \(root)/nginx/nginx.pid;
                error_log \(root)/nginx/logs/error.log warn;
                events { worker_connections 1024; }
                http {
                    access_log off;
                    client_body_temp_path \(root)/nginx/body;
                    proxy_temp_path \(root)/nginx/proxy;
                    include \(root)/nginx/conf.d/*.conf;
                }
                """
            try configuration.write(toFile: "\(root)/nginx/nginx.conf", atomically: true, encoding: .utf8)
        }
    }

    /// The article's text → the test's, made in this order. Each row must match somewhere: a row
    /// that matches nothing means the article changed, and the test fails until the table is read
    /// again. A command replaced by `: command` is a shell no-op that stays in view: not run here.
    static func substitutions(for machine: Machine) -> [DeploymentArticle.Substitution] {
        let root = machine.root
        func notRun(_ text: String, _ why: String) -> DeploymentArticle.Substitution {
            .init(article: text, test: ": " + text, why: "not run: " + why)
        }
        var table: [DeploymentArticle.Substitution] = [
            notRun("apt-get ", "root's package installation; theStepsThatCannotRunHereAreChecked checks the packages"),
            notRun("git clone ", "the test runs in the clone; its URL is checked against the README's"),
            .init(
                article: "cd swift-defaults/SyncService", test: "cd \(repository)/SyncService",
                why: "the clone is this repository"),
            notRun(
                "swift build -c release --product defaults-sync-server",
                "a release build takes minutes; the test installs the debug build it runs from"),
            .init(
                article: ".build/release/defaults-sync-server", test: builtExecutable("defaults-sync-server"),
                why: "the debug build of this test run"),
            .init(article: "/usr/local/bin/", test: "\(root)/bin/", why: "the test's PATH starts with it"),
            .init(article: "/etc/defaults-sync", test: "\(root)/etc/defaults-sync", why: "the test's directory"),
            .init(
                article: "127.0.0.1/sync", test: "127.0.0.1:\(machine.postgresPort)/sync",
                why: "the test's PostgreSQL listens on a free port, Debian's on 5432"),
            .init(article: "8081", test: "\(machine.instancePorts[0])", why: "a free port"),
            .init(article: "8082", test: "\(machine.instancePorts[1])", why: "a free port"),
            .init(article: "9081", test: "\(machine.metricsPorts[0])", why: "a free port"),
            .init(article: "9082", test: "\(machine.metricsPorts[1])", why: "a free port"),
            .init(
                article: "listen 443 ssl", test: "listen 127.0.0.1:\(machine.tlsPort) ssl",
                why: "a free port, on loopback only"),
            .init(
                article: "wss://sync.example.com", test: "wss://localhost:\(machine.tlsPort)",
                why: "nginx's port here"),
            .init(
                article: "sync.example.com", test: "localhost",
                why: "a name this machine resolves to itself, for the certificate, nginx and the devices"),
            .init(article: "/etc/ssl/", test: "\(root)/ssl/", why: "the test's directory"),
            .init(article: "/etc/nginx/", test: "\(root)/nginx/", why: "the test's directory"),
            .init(
                article: "nginx -t", test: "\(machine.nginx) -t",
                why: "its nginx.conf stands for Debian's, which includes conf.d/*.conf"),
            .init(
                article: "systemctl reload nginx", test: "\(machine.nginx) &",
                why: "no systemd here: nginx runs as a job of the shell, as the instances do"),
        ]
        if !isRoot {
            table.append(
                .init(
                    article: "runuser -u postgres -- ", test: "",
                    why: "not root: the test's cluster belongs to this user, its superuser `postgres` (PGUSER)"))
        }
        return table
    }

    @Test func everySubstitutionMatchesTheArticle() throws {
        let machine = try Machine(root: "/tmp/deployment-article", postgresDirectory: "/tmp/postgres", postgresPort: 1)
        let (blocks, unmatched) = try DeploymentArticle().substituted(Self.substitutions(for: machine))
        #expect(unmatched.map(\.article) == [], "rows of the table the article no longer has")
        #expect(blocks.map(\.language) == Array(repeating: "sh", count: 7) + ["nginx", "sh", "swift", "sh"])
        // Nothing of the article's machine is left in what runs: every path is the test's.
        for block in blocks where block.language != "swift" {
            let left = block.code.matches(of: #/(?:^|[\s="])(/etc/\S*|/usr/local/\S*)/#.anchorsMatchLineEndings())
            #expect(left.isEmpty, "\(block) still names \(left.map(\.output.1))")
            #expect(!block.code.contains("sync.example.com") && !block.code.contains("sudo "), "\(block)")
        }
    }

    @Test(
        .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"),
        .enabled(if: NginxProxy.isAvailable, "needs Debian's nginx package"),
        .enabled(if: DeploymentArticleTests.hasOpenSSL, "needs /usr/bin/openssl (Debian's openssl package)"))
    func theArticlesCommandsDeployTheServiceAndTwoDevicesSyncThroughTLS() async throws {
        try await PostgresCluster.with { cluster in
            let directory = try TemporaryDirectory()
            let machine = try Machine(
                root: directory.url.path, postgresDirectory: cluster.directory, postgresPort: cluster.port)
            try machine.prepare()
            let (blocks, unmatched) = try DeploymentArticle().substituted(Self.substitutions(for: machine))
            #expect(unmatched.isEmpty, "\(unmatched.map(\.article))")
            let shell = try ArticleShell(environment: machine.environment, directory: directory.url.path)
            var token: String?
            var certificate: String?
            var devices: ArticleDevices?
            var steps: Set<String> = []
            for block in blocks {
                switch block.language {
                case "sh":
                    let output = try await shell.run(block.code)
                    if block.code.contains("defaults-sync-server token ") {
                        token = output.last
                        steps.insert("token")
                    }
                    for port in block.code.matches(of: #/serve --port (\d+)/#).map({ String($0.output.1) }) {
                        _ = try await shell.child.line(.error, timeout: .seconds(60)) {
                            $0.hasSuffix("listening on 127.0.0.1:\(port)")
                        }
                        steps.insert("instance \(port)")
                    }
                    if let out = block.code.firstMatch(of: #/-out (\S+)/#), block.code.contains("openssl req") {
                        certificate = String(out.output.1)
                    }
                    if block.code.contains("\(machine.nginx) &") {
                        try await waitUntil("nginx to listen; \(shell.log.suffix(2000))", timeout: .seconds(20)) {
                            NginxProxy.accepts(machine.tlsPort)
                        }
                        steps.insert("nginx")
                    }
                    if block.code.contains("defaults-sync-server revoke ") {
                        let devices = try #require(devices, "the article revokes before the devices connect")
                        try await devices.waitUntilRevoked()
                        steps.insert("revoked")
                    }
                case "nginx":
                    // Its first line names the file it is saved as.
                    let path = try #require(
                        block.code.firstMatch(of: #/^# (\S+\.conf)\n/#)?.output.1, "\(block): no file named")
                    #expect(path.hasPrefix("\(machine.root)/nginx/conf.d/"), "\(block) is saved as \(path)")
                    try block.code.write(toFile: String(path), atomically: true, encoding: .utf8)
                case "swift":
                    for line in ArticleDevices.articleLines {
                        #expect(block.code.contains(line), "\(block) no longer has the test's line \(line)")
                    }
                    let url = try #require(
                        block.code.matches(of: #/SyncServiceStore\(url: "([^"]+)"/#).last?.output.1,
                        "\(block): no URL")
                    let pem = try Data(contentsOf: URL(fileURLWithPath: try #require(certificate, "no certificate")))
                    devices = try await ArticleDevices(
                        url: String(url), token: try #require(token, "no token printed"), certificate: Array(pem))
                    try await devices?.syncAValue(instancePorts: machine.instancePorts)
                    steps.insert("synced")
                default:
                    Issue.record("\(block): a language the test does not know")
                }
            }
            let expected = Set(["token", "nginx", "synced", "revoked"]).union(
                machine.instancePorts.map { "instance \($0)" })
            #expect(steps == expected, "steps the article never reached: \(expected.subtracting(steps))")
            devices?.stop()
            try await shell.stop()
            // The instances drained and stopped on SIGTERM, as the article says.
            #expect(shell.log.contains("stopped"), "\(shell.log.suffix(3000))")
        }
    }

    /// What cannot run here, root's `apt-get` and systemd, is checked: the packages are the ones
    /// CI installs, the clone is this repository, the build's product exists.
    @Test func theStepsThatCannotRunHereAreChecked() throws {
        let article = try DeploymentArticle()
        let shell = article.blocks.filter { $0.language == "sh" }.map(\.code).joined(separator: "\n")
        let installed = try #require(shell.firstMatch(of: #/apt-get install -y ([^\n]+)/#)?.output.1)
        let ci = try String(contentsOfFile: "\(Self.repository)/.ci/run", encoding: .utf8)
        let ciInstalled = try #require(ci.firstMatch(of: #/apt-get install ([^<\n]+)/#)?.output.1)
        #expect(Set(Self.packages(installed)) == Set(Self.packages(ciInstalled)), "the article's: \(installed)")
        #expect(shell.contains("apt-get update\n"), "a fresh machine's package lists are empty")

        let readme = try String(contentsOfFile: "\(Self.repository)/README.md", encoding: .utf8)
        let package = try #require(readme.firstMatch(of: #/\.package\(url: "([^"]+)"/#)?.output.1)
        let clone = try #require(shell.firstMatch(of: #/git clone (\S+)\ncd (\S+)/#))
        #expect(clone.output.1 == package)
        #expect(clone.output.2 == "\(package.split(separator: "/").last ?? "")/SyncService")

        let manifest = try String(contentsOfFile: "\(Self.repository)/SyncService/Package.swift", encoding: .utf8)
        let product = try #require(shell.firstMatch(of: #/swift build -c release --product (\S+)/#)?.output.1)
        #expect(manifest.contains(".executable(name: \"\(product)\""))
        #expect(shell.contains("install -m 755 .build/release/\(product) /usr/local/bin/"))
    }

    /// The packages the article installs are Debian's, installed on this machine (so the run
    /// above used them), and nginx's ships the systemd unit the article reloads.
    @Test(.enabled(if: DeploymentArticleTests.dpkgQuery != nil, "needs dpkg-query (Debian)"))
    func theArticlesPackagesAreInstalledHere() throws {
        let article = try DeploymentArticle()
        let shell = article.blocks.filter { $0.language == "sh" }.map(\.code).joined(separator: "\n")
        let installed = try #require(shell.firstMatch(of: #/apt-get install -y ([^\n]+)/#)?.output.1)
        for package in Self.packages(installed) {
            let status = try ChildProcess.run(
                try #require(Self.dpkgQuery), ["-W", "-f", "${db:Status-Status}", package])
            #expect(status.output == "installed", "\(package): \(status)")
        }
        let units = try ChildProcess.run(try #require(Self.dpkgQuery), ["-L", "nginx-common"])
        #expect(units.output.contains("/systemd/system/nginx.service"), "\(units)")
    }

    @Test(.enabled(if: SwiftCompiler.isAvailable, "needs swiftc on PATH"))
    func theSwiftBlockCompilesAsWritten() throws {
        let swift = try DeploymentArticle().blocks.filter { $0.language == "swift" }
        #expect(swift.count == 1)
        for block in swift {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("deployment-article-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("main.swift")
            try Data(block.code.utf8).write(to: file)
            let result = try SwiftCompiler.typecheck(file, asManifest: false)
            #expect(result.status == 0, "\(block) does not compile:\n\(result.error)\(result.output)")
        }
    }

    /// The words of an `apt-get install` line that are packages, not options.
    static func packages(_ line: Substring) -> [String] {
        line.split(separator: " ").filter { !$0.hasPrefix("-") }.map(String.init)
    }
}

/// Two devices of the article's user, connected as its Swift block connects them, and a third
/// that trusts only the system's authorities, which must never get through.
final class ArticleDevices: Sendable {
    final class Observed: Sendable {
        private let connections = Mutex(0)
        private let errors = Mutex<[String]>([])
        private let keys = Mutex<[String]>([])

        var connectionCount: Int { connections.withLock { $0 } }
        var disconnections: [String] { errors.withLock { $0 } }
        var received: [String] { keys.withLock { $0 } }

        func record(_ event: SyncEvent) {
            switch event {
            case .connected: connections.withLock { $0 += 1 }
            case .disconnected(let error): errors.withLock { $0.append("\(error)") }
            case .received(let records): keys.withLock { $0 += records.map(\.key) }
            }
        }
    }

    let stores: [SyncServiceStore]
    let observed: [Observed]
    let untrusting: Observed
    private let runs: [Task<Void, Never>]

    init(url: String, token: String, certificate: [UInt8]) async throws {
        let stores = try (0..<2).map { _ in try Self.store(url: url, token: token, trusting: certificate) }
        let observed = stores.map { _ in Observed() }
        let untrusting = Observed()
        let withSystemRoots = try SyncServiceStore(url: url, token: token)
        runs =
            zip(stores, observed).map { store, observed in Task { await store.run { observed.record($0) } } }
            + [Task { await withSystemRoots.run { untrusting.record($0) } }]
        self.stores = stores
        self.observed = observed
        self.untrusting = untrusting
    }

    /// The lines of the article's `store(token:trusting:)` that ``store(url:token:trusting:)``
    /// runs: the test checks that the article still has them.
    static let articleLines = [
        "var tls = TLSConfiguration.makeClientConfiguration()",
        "tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(certificatePEM))",
        "var options = SyncServiceStore.Options()",
        "options.tlsConfiguration = tls",
    ]

    /// The article's `store(token:trusting:)`, at the article's URL.
    static func store(url: String, token: String, trusting certificatePEM: [UInt8]) throws -> SyncServiceStore {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(certificatePEM))
        var options = SyncServiceStore.Options()
        options.tlsConfiguration = tls
        return try SyncServiceStore(url: url, token: token, options: options)
    }

    /// One device stores a value; the other receives it. Both reached the instances through nginx.
    func syncAValue(instancePorts: [Int]) async throws {
        try await waitUntil("both devices to connect; \(observed.map(\.disconnections))", timeout: .seconds(30)) {
            observed.allSatisfy { $0.connectionCount >= 1 }
        }
        let value = Data("true".utf8)
        let record = SyncRecord(
            key: "isUnicornMode", value: value,
            timestamp: SyncTimestamp(
                wallTime: Int64(Date().timeIntervalSince1970 * 1000), counter: 0, origin: "first-device"))
        try await stores[0].push([record])
        try await waitUntil("the second device to receive it", timeout: .seconds(30)) {
            observed[1].received.contains("isUnicornMode")
        }
        #expect(try await stores[1].records(forKeys: ["isUnicornMode"]).map(\.value) == [value])
        try await waitUntil("both devices on the instances, through nginx") {
            try Self.connections(instancePorts) == 2
        }
        // TLS is verified: a device that trusts only the system's authorities does not get through.
        try await waitUntil("the untrusting device to fail", timeout: .seconds(30)) {
            !untrusting.disconnections.isEmpty
        }
        #expect(untrusting.connectionCount == 0, "\(untrusting.disconnections)")
    }

    /// Waits until the server closed both devices' connections as revoked.
    func waitUntilRevoked() async throws {
        try await waitUntil("the devices to be closed as revoked; \(observed.map(\.disconnections))") {
            observed.allSatisfy { $0.disconnections.contains { $0.contains("revoked") } }
        }
    }

    /// The devices connected to the instances, as their `GET /health` says.
    static func connections(_ ports: [Int]) throws -> Int {
        struct Health: Decodable { var connections: Int }
        return try ports.reduce(0) { total, port in
            let result = try ChildProcess.run(
                "/usr/bin/curl", ["-s", "--max-time", "10", "http://127.0.0.1:\(port)/health"], timeout: .seconds(20))
            return total + (try JSONDecoder().decode(Health.self, from: result.outputData)).connections
        }
    }

    func stop() {
        for run in runs { run.cancel() }
    }

    deinit { stop() }
}
