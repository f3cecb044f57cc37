import DefaultsSyncClient
import DefaultsSyncProtocol
import Foundation
import NIOWebSocket
import TestSupport
import Testing

@testable import DefaultsSyncServer

/// Tokens as a hosted service needs them: every time claim judged with a leeway and never
/// trapping on a number, an audience and an issuer, a maximum lifetime, keys rotated by `kid`, a
/// connection closed when its token expires, and a device that renews its token and goes on.
@Suite(.serialized, .enabled(if: PostgresCluster.isAvailable, "needs Debian's postgresql package"), .postgresCluster)
struct TokenTests {
    @Test func extremeNumbersInTheClaimsAreRefusedAndTheServerKeepsServing() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let now = Int64(Date().timeIntervalSince1970)
        // Validly signed, each with one number no one should have put there.
        let cases: [(String, String)] = [
            (#""exp":1e19"#, "exp is not a time"),
            (#""exp":10000000000000000000"#, "exp is not a time"),
            (#""exp":9223372036854775807"#, "exp is not a time"),
            (#""exp":-9223372036854775809"#, "exp is not a time"),
            (#""exp":-1"#, "exp is not a time"),
            (#""exp":1e308"#, "exp is not a time"),
            // Beyond a Double: refused, whichever reading gives up first.
            (#""exp":1e400"#, "the token is not a JWT"),
            (#""exp":"1e19""#, "exp is not a number"),
            (#""exp":null"#, "exp is not a number"),
            (#""exp":\#(now + 600),"nbf":-1e19"#, "nbf is not a time"),
            (#""exp":\#(now + 600),"iat":1e19"#, "iat is not a time"),
            (#""exp":1.5"#, "expired"),
        ]
        for (claims, reason) in cases {
            let token = try key.tokens.sign(payload: Data(#"{"sub":"gina","ns":"com.example.app",\#(claims)}"#.utf8))
            let close = try await attempt(server, token)
            #expect(close.messages.isEmpty, "\(claims)")
            #expect(close.code == .policyViolation, "\(claims)")
            #expect(close.reason?.contains(reason) == true, "\(claims): \(close.reason ?? "no reason")")
            // The device's own reading refuses it too (an expired token aside), and traps on nothing.
            if reason != "expired" {
                #expect(throws: SyncServiceError.invalidToken, "\(claims)") {
                    _ = try SyncServiceStore(url: server.url, token: token)
                }
            }
        }
        // Still serving.
        let close = try await attempt(server, try await key.token(user: "gina"))
        #expect(close.messages.first?.kind == .welcome, "\(close)")
        try await waitUntil("every connection to be gone") { try await server.connections() == 0 }
    }

    @Test func notBeforeOrIssuedAtADayAheadIsRefused() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let now = Int64(Date().timeIntervalSince1970)
        let cases: [(String, String)] = [
            (#""iat":\#(now),"nbf":\#(now + 86_400),"exp":\#(now + 90_000)"#, "not valid yet"),
            (#""iat":\#(now + 86_400),"exp":\#(now + 90_000)"#, "issued in the future"),
        ]
        for (claims, reason) in cases {
            let token = try key.tokens.sign(payload: Data(#"{"sub":"hal","ns":"com.example.app",\#(claims)}"#.utf8))
            let close = try await attempt(server, token)
            #expect(close.messages.isEmpty && close.code == .policyViolation, "\(claims)")
            #expect(close.reason?.contains(reason) == true, "\(claims): \(close.reason ?? "no reason")")
        }
        // Within the leeway (60 s), a sign-in service's clock a little ahead is no problem.
        let ahead = try key.tokens.sign(
            payload: Data(
                #"{"sub":"hal","ns":"com.example.app","iat":\#(now + 20),"nbf":\#(now + 20),"exp":\#(now + 600)}"#.utf8)
        )
        #expect(try await attempt(server, ahead).messages.first?.kind == .welcome)
    }

    @Test func anAudienceAndAnIssuerAreRequiredWhenConfigured() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path,
            options: ["--token-audience", "sync.example.com", "--token-issuer", "https://id.example.com"])
        let tokens = key.tokens
        let cases: [(String, String, String?)] = [
            (
                "neither", try await tokens.sign(user: "ivy", namespace: "com.example.app", lifetime: .seconds(600)),
                "iss"
            ),
            (
                "another audience",
                try await tokens.sign(
                    user: "ivy", namespace: "com.example.app", lifetime: .seconds(600),
                    issuer: "https://id.example.com",
                    audience: "other.example.com"), "aud"
            ),
            (
                "another issuer",
                try await tokens.sign(
                    user: "ivy", namespace: "com.example.app", lifetime: .seconds(600),
                    issuer: "https://evil.example.com",
                    audience: "sync.example.com"), "iss"
            ),
            (
                "no audience",
                try await tokens.sign(
                    user: "ivy", namespace: "com.example.app", lifetime: .seconds(600), issuer: "https://id.example.com"
                ),
                "aud"
            ),
            (
                "both",
                try await tokens.sign(
                    user: "ivy", namespace: "com.example.app", lifetime: .seconds(600),
                    issuer: "https://id.example.com",
                    audience: "sync.example.com"), nil
            ),
        ]
        for (name, token, reason) in cases {
            let close = try await attempt(server, token)
            if let reason {
                #expect(close.messages.isEmpty && close.code == .policyViolation, "\(name)")
                #expect(close.reason?.contains("(\(reason))") == true, "\(name): \(close.reason ?? "no reason")")
            } else {
                #expect(close.messages.first?.kind == .welcome, "\(name): \(close)")
            }
        }
        // An audience among several is enough; the token command signs both claims.
        let now = Int64(Date().timeIntervalSince1970)
        let listed = try tokens.sign(
            payload: Data(
                (#"{"sub":"ivy","ns":"com.example.app","iat":\#(now),"exp":\#(now + 600),"#
                    + #""iss":"https://id.example.com","aud":["a.example.com","sync.example.com"]}"#).utf8))
        #expect(try await attempt(server, listed).messages.first?.kind == .welcome)
        // One run signs a token for each --user, one a line, in their order.
        let printed = try ChildProcess.run(
            SyncServerProcess.executable,
            [
                "token", "--key-file", key.path, "--user", "ivy", "--user", "jo", "--namespace", "com.example.app",
                "--issuer", "https://id.example.com", "--audience", "sync.example.com",
            ])
        #expect(printed.status == 0, "\(printed)")
        let signed = printed.output.split(separator: "\n").map(String.init)
        try #require(signed.count == 2, "\(printed)")
        for (token, user) in zip(signed, ["ivy", "jo"]) {
            #expect(try await tokens.verify(token).user == user)
            #expect(try await attempt(server, token).messages.first?.kind == .welcome)
        }
    }

    @Test func aLifetimeOverTheMaximumIsRefused() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--max-token-lifetime", "1h"])
        let now = Int64(Date().timeIntervalSince1970)
        let tooLong = try await key.token(user: "jay", lifetime: .seconds(7200))
        let close = try await attempt(server, tooLong)
        #expect(close.messages.isEmpty && close.code == .policyViolation)
        #expect(close.reason?.contains("lives longer than this server allows (3600 s") == true, "\(close)")
        // Without `iat`, no one can tell how long it lives: refused while a maximum is set.
        let undated = try key.tokens.sign(
            payload: Data(#"{"sub":"jay","ns":"com.example.app","exp":\#(now + 600)}"#.utf8))
        let closeUndated = try await attempt(server, undated)
        #expect(closeUndated.reason?.contains("does not say when it was issued") == true, "\(closeUndated)")
        #expect(
            try await attempt(server, try await key.token(user: "jay", lifetime: .seconds(1800))).messages.first?.kind
                == .welcome)
        // The default maximum is 30 days.
        let defaults = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let month = try await key.token(user: "jay", lifetime: .seconds(31 * 86_400))
        #expect(try await attempt(defaults, month).reason?.contains("(2592000 s from iat)") == true)
    }

    @Test func aSilentConnectionIsClosedWhenItsTokenExpires() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--token-leeway", "0s"])
        let token = try await key.token(user: "kim", lifetime: .seconds(5))
        // Reads, never sends: only the server's timer can end it.
        let close = try await RawDevice.connect(server.url, token: token, deadline: .seconds(60)) { inbound, _ in
            try await RawDevice.messages(inbound)
        }
        #expect(close.messages.first?.kind == .welcome, "\(close)")
        #expect(close.code == .policyViolation)
        #expect(SyncCloseReason(closeReason: close.reason) == .tokenExpired, "\(close.reason ?? "no reason")")
        try await waitUntil("the closed connection to be gone") { try await server.connections() == 0 }
    }

    @Test func aStoreWithATokenProviderRenewsItsTokenAndGoesOnSyncing() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(
            database: cluster.url, keyFile: key.path, options: ["--token-leeway", "0s"])
        // What the app's sign-in service hands out, as the laptop's token provider reads it.
        let tokenFile = directory.url.appendingPathComponent("laptop.token").path
        func handOut(_ lifetime: Duration) async throws {
            try (try await key.token(user: "lee", lifetime: lifetime)).write(
                toFile: tokenFile, atomically: true, encoding: .utf8)
        }
        // First an expired token: refused at connect, so the provider is asked again.
        try await handOut(.seconds(-3600))
        let laptop = try await SyncProcess(
            configDirectory: directory.machine("laptop"), url: server.url, namespace: "-", tokenFile: tokenFile)
        let desktop = try await SyncProcess(
            configDirectory: directory.machine("desktop"), url: server.url, namespace: "-",
            token: try await key.token(user: "lee"))
        func asked() async throws -> Int {
            Int(try await laptop.send("tokens", answer: "tokens ").dropFirst("tokens ".count)) ?? 0
        }
        try await waitUntil("the laptop to ask for a token again after a refusal") { try await asked() >= 2 }
        // Then a short-lived one, which the server accepts and later closes the connection of; once
        // the laptop holds it, the sign-in service hands out longer ones.
        try await handOut(.seconds(10))
        try await waitUntil("the laptop to connect") {
            try await laptop.send("status", answer: "status").contains("connected=true")
        }
        try await handOut(.seconds(3600))
        try await laptop.set("before", "1")
        try await desktop.waitUntil("before", is: "1")
        try await waitUntil("the server to close the laptop's connection as its token expired") {
            server.log.contains(SyncCloseReason.tokenExpired.text(AccessTokenError.expired.description))
        }
        // The desktop's change after the expiry reaches the laptop over its renewed connection.
        try await desktop.set("after", "2")
        try await laptop.waitUntil("after", is: "2")
        try await laptop.set("back", "3")
        try await desktop.waitUntil("back", is: "3")
        #expect(try await asked() >= 4)
        // A refusal and a renewal are routine: warnings, not errors.
        let reports = laptop.log.split(separator: "\n").filter { $0.contains("not syncing") }
        #expect(!reports.isEmpty && reports.allSatisfy { $0.contains(" warning ") }, "\(laptop.log)")
    }

    @Test func tokensOfBothKeysVerifyDuringARotationAndTheRemovedKeysAfter() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let old = try makeKeyFile("2025-01", in: directory)
        let new = try makeKeyFile("2025-07", in: directory)
        let both = try await AccessTokens(keyFiles: [old, new])
        #expect(both.keyIDs == ["2025-01", "2025-07"])
        let oldToken = try await both.sign(user: "max", namespace: "com.example.app", lifetime: .seconds(600))
        // The token command signs with the key --kid names, and says which in the header.
        let printed = try ChildProcess.run(
            SyncServerProcess.executable,
            [
                "token", "--key-file", old, "--key-file", new, "--kid", "2025-07", "--user", "max", "--namespace",
                "com.example.app",
            ])
        #expect(printed.status == 0, "\(printed)")
        let newToken = printed.output.trimmingCharacters(in: .newlines)
        #expect(TokenHeader(unverifiedToken: oldToken)?.keyID == "2025-01")
        #expect(TokenHeader(unverifiedToken: newToken)?.keyID == "2025-07")

        let during = try await SyncServerProcess(
            database: cluster.url, keyFile: old, options: ["--token-key-file", new])
        #expect(try await attempt(during, oldToken).messages.first?.kind == .welcome)
        #expect(try await attempt(during, newToken).messages.first?.kind == .welcome)
        // A token naming one key but signed with the other is not verified with the one it names.
        let forged = try await AccessTokens(keys: [
            AccessTokenKey(id: "2025-07", bytes: try Data(contentsOf: URL(fileURLWithPath: old)))
        ]).sign(user: "max", namespace: "com.example.app", lifetime: .seconds(600))
        #expect(try await attempt(during, forged).reason?.contains("signature") == true)

        let after = try await SyncServerProcess(database: cluster.url, keyFile: new)
        let refused = try await attempt(after, oldToken)
        #expect(refused.messages.isEmpty && refused.code == .policyViolation)
        #expect(refused.reason?.contains("kid 2025-01") == true, "\(refused)")
        #expect(try await attempt(after, newToken).messages.first?.kind == .welcome)
        let unknown = try ChildProcess.run(
            SyncServerProcess.executable,
            ["token", "--key-file", new, "--kid", "2025-01", "--user", "max", "--namespace", "com.example.app"])
        #expect(unknown.status != 0 && unknown.error.contains("2025-01"), "\(unknown)")
    }

    @Test func controlCharactersOrOverlongNamesInTheClaimsAreRefused() async throws {
        let cluster = try #require(PostgresCluster.shared)
        let directory = try TemporaryDirectory()
        let key = try await TokenKey(in: directory)
        let server = try await SyncServerProcess(database: cluster.url, keyFile: key.path)
        let now = Int64(Date().timeIntervalSince1970)
        let long = String(repeating: "é", count: 128)  // 256 bytes
        let cases: [(String, String, String)] = [
            (#"alice\ncom.example.app"#, "com.example.app", "sub holds a control character"),
            ("alice", #"b\nc"#, "ns holds a control character"),
            (#"a\u0000"#, "com.example.app", "sub holds a control character"),
            (#"a\u2028b"#, "com.example.app", "sub holds a control character"),
            ("alice", #"a\u001b[31m"#, "ns holds a control character"),
            (long, "com.example.app", "sub is longer than 255 bytes"),
            ("alice", long, "ns is longer than 255 bytes"),
            ("", "com.example.app", "sub is empty"),
        ]
        for (user, namespace, reason) in cases {
            let token = try key.tokens.sign(
                payload: Data(#"{"sub":"\#(user)","ns":"\#(namespace)","iat":\#(now),"exp":\#(now + 600)}"#.utf8))
            let close = try await attempt(server, token)
            #expect(close.messages.isEmpty && close.code == .policyViolation, "\(user) \(namespace)")
            #expect(close.reason?.contains(reason) == true, "\(user) \(namespace): \(close.reason ?? "no reason")")
            #expect(throws: SyncServiceError.invalidToken) { _ = try SyncServiceStore(url: server.url, token: token) }
        }
        // Nor does the token command sign one.
        let printed = try ChildProcess.run(
            SyncServerProcess.executable,
            ["token", "--key-file", key.path, "--user", "alice\ncom.example.app", "--namespace", "x"])
        #expect(printed.status != 0 && printed.output.isEmpty, "\(printed)")
        #expect(printed.error.contains("sub holds a control character"), "\(printed)")
        // Nor another user's of the same run: a run prints every token or none.
        let batch = try ChildProcess.run(
            SyncServerProcess.executable,
            ["token", "--key-file", key.path, "--user", "bob", "--user", "alice\u{7}", "--namespace", "x"])
        #expect(batch.status != 0 && batch.output.isEmpty, "\(batch)")
        let none = try ChildProcess.run(
            SyncServerProcess.executable, ["token", "--key-file", key.path, "--namespace", "x"])
        #expect(none.status != 0 && none.output.isEmpty && none.error.contains("--user"), "\(none)")
        // A name of 255 bytes is fine.
        let longest = String(repeating: "é", count: 127) + "a"
        #expect(try await attempt(server, try await key.token(user: longest)).messages.first?.kind == .welcome)
    }

    /// Connects with `token`: the welcome, when the server accepts it (the device then closes), or
    /// nothing and how the server closed the connection.
    private func attempt(_ server: SyncServerProcess, _ token: String) async throws -> RawDevice.Closed {
        try await RawDevice.connect(server.url, token: token, deadline: .seconds(30)) { inbound, outbound in
            var iterator = inbound.messages(maxSize: 1 << 24).makeAsyncIterator()
            guard let first = try await RawDevice.next(&iterator) else { return [] }
            try await outbound.close(.normalClosure, reason: nil)
            return [first]
        }
    }
}

/// The key files the server reads, refused as OpenSSH refuses a private key others can read.
struct TokenKeyFileTests {
    @Test(arguments: [0o644, 0o640, 0o604, 0o620, 0o602, 0o660])
    func aKeyFileOthersCanReadOrWriteStopsTheServer(mode: Int) throws {
        let directory = try TemporaryDirectory()
        let path = try makeKeyFile("open", in: directory, mode: mode)
        let result = try ChildProcess.run(
            SyncServerProcess.executable,
            ["serve", "--database-url", "postgres://nobody@127.0.0.1:1/none", "--port", "0", "--token-key-file", path])
        #expect(result.status != 0 && result.output.isEmpty, "\(result)")
        #expect(result.error.contains(path) && result.error.contains("group or others"), "\(result)")
        #expect(result.error.contains("mode 0\(String(mode, radix: 8))"), "\(result)")
        // The token command reads keys the same way.
        let token = try ChildProcess.run(
            SyncServerProcess.executable, ["token", "--key-file", path, "--user", "a", "--namespace", "b"])
        #expect(token.status != 0 && token.error.contains("group or others"), "\(token)")
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to give the file to another user"))
    func aKeyFileOfAnotherUserStopsTheServer() throws {
        let directory = try TemporaryDirectory()
        let path = try makeKeyFile("theirs", in: directory)
        #expect(chown(path, 1, 1) == 0)
        let result = try ChildProcess.run(
            SyncServerProcess.executable,
            ["serve", "--database-url", "postgres://nobody@127.0.0.1:1/none", "--port", "0", "--token-key-file", path])
        #expect(result.status != 0 && result.error.contains(path), "\(result)")
        #expect(result.error.contains("owned by user id 1"), "\(result)")
    }

    @Test func aKeyFileNamedWithoutAnIDIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let path = try makeKeyFile("two words", in: directory)
        await #expect(throws: AccessTokenError.self) { try await AccessTokens(keyFile: path) }
        let first = try makeKeyFile("same", in: directory)
        let other = try TemporaryDirectory()
        let second = try makeKeyFile("same", in: other)
        await #expect(throws: AccessTokenError.duplicateKeyID("same")) {
            try await AccessTokens(keyFiles: [first, second])
        }
    }

    @Test func theClaimsAreReadAlikeByTheServerAndTheDevice() throws {
        func claims(_ json: String) throws(TokenClaims.Problem) -> TokenClaims {
            let part = Data(json.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            return try TokenClaims(unverifiedPayloadOf: "e30.\(part).sig")
        }
        let read = try claims(
            #"{"sub":"ann","ns":"app","exp":1700000000.9,"nbf":1600000000,"iat":1600000000,"iss":"i","aud":"a"}"#)
        #expect(
            read
                == TokenClaims(
                    user: "ann", namespace: "app", expires: 1_700_000_000, notBefore: 1_600_000_000,
                    issuedAt: 1_600_000_000, issuer: "i", audience: ["a"]))
        #expect(throws: TokenClaims.Problem.self) { try claims(#"{"sub":"ann","ns":"app","exp":1e19}"#) }
        #expect(throws: TokenClaims.Problem.self) { try claims(#"{"sub":"ann","ns":"app","exp":1,"aud":7}"#) }
        #expect(throws: TokenClaims.Problem.self) { try claims(#"{"sub":"ann","ns":"app"}"#) }
        #expect(throws: TokenClaims.Problem.self) { try claims("[1]") }
        // What a device is given is checked before it is used: no trap, a clear error.
        #expect(throws: SyncServiceError.invalidToken) {
            _ = try SyncServiceStore(url: "ws://127.0.0.1:1", token: "a.b")
        }
    }
}

/// A key file of 32 random bytes named `<id>.key` in `directory`, with `mode`.
func makeKeyFile(_ id: String, in directory: TemporaryDirectory, mode: Int = 0o600) throws -> String {
    let path = directory.url.appendingPathComponent("\(id).key").path
    let bytes = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
    guard FileManager.default.createFile(atPath: path, contents: bytes, attributes: [.posixPermissions: 0o600]),
        chmod(path, mode_t(mode)) == 0
    else { throw CocoaError(.fileWriteUnknown) }
    return path
}
