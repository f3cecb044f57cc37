import Configuration
import Defaults
import DefaultsConfiguration
import DefaultsPropertyList
import Foundation
import TestSupport
import Testing

@Suite("DefaultsProvider in a ConfigReader", .mayBlock)
struct DefaultsProviderReaderTests {
    @Test("The environment wins over the suite, the suite over the reader's default")
    func precedence() throws {
        let suite = InMemorySuite(name: "precedence-\(UUID().uuidString)")
        suite.set(["timeout": 60, "host": "settings.example"], forKey: "http")
        let config = ConfigReader(providers: [
            EnvironmentVariablesProvider(environmentVariables: ["HTTP_TIMEOUT": "5"]),
            DefaultsProvider(suite: suite),
        ])
        #expect(config.int(forKey: "http.timeout", default: 30) == 5)
        #expect(config.string(forKey: "http.host", default: "localhost") == "settings.example")
        #expect(config.int(forKey: "http.retries", default: 3) == 3)
        #expect(config.string(forKey: "http.scheme") == nil)
    }

    @Test("A value the user stores later is read at once, and a removed one falls back")
    func liveValues() {
        let suite = InMemorySuite(name: "live-\(UUID().uuidString)")
        let config = ConfigReader(provider: DefaultsProvider(suite: suite))
        #expect(config.bool(forKey: "verbose", default: false) == false)
        suite.set(true, forKey: "verbose")
        #expect(config.bool(forKey: "verbose", default: false) == true)
        suite.set(nil, forKey: "verbose")
        #expect(config.bool(forKey: "verbose", default: false) == false)
    }

    @Test("Only stored values: registered defaults and launch arguments are not the provider's")
    func storedValuesOnly() throws {
        let sandbox = try ProviderSandbox()
        let suite = sandbox.suite(arguments: ["-volume", "9"])
        suite.register(defaults: ["theme": "dark"])
        suite.set(4, forKey: "level")
        let config = ConfigReader(provider: DefaultsProvider(suite: suite))
        #expect(config.int(forKey: "volume") == nil)
        #expect(config.string(forKey: "theme") == nil)
        #expect(config.int(forKey: "level") == 4)
    }

    @Test("A scoped reader reads inside the dictionary of its scope")
    func scopedReader() {
        let suite = InMemorySuite(name: "scoped-\(UUID().uuidString)")
        suite.set(["http": ["port": 8080]], forKey: "server")
        let server = ConfigReader(provider: DefaultsProvider(suite: suite)).scoped(to: "server")
        #expect(server.int(forKey: "http.port") == 8080)
    }

    @Test("The provider names its suite")
    func providerName() {
        let provider = DefaultsProvider(suite: InMemorySuite(name: "com.example.named"))
        #expect(provider.providerName == "DefaultsProvider[com.example.named]")
    }
}

@Suite("DefaultsProvider keys", .mayBlock)
struct DefaultsProviderKeyTests {
    let suite = InMemorySuite(name: "keys-\(UUID().uuidString)")
    var provider: DefaultsProvider { DefaultsProvider(suite: suite) }

    func lookup(_ key: String, _ type: ConfigType = .string) throws -> LookupResult {
        try provider.value(forKey: AbsoluteConfigKey(ConfigKey(key)), type: type)
    }

    @Test("Dotted keys read nested dictionaries, at any depth")
    func nested() throws {
        suite.set(["database": ["primary": ["host": "db1", "port": 5432]]], forKey: "services")
        #expect(try lookup("services.database.primary.host").value == ConfigValue("db1", isSecret: false))
        #expect(try lookup("services.database.primary.port", .int).value?.content == .int(5432))
        #expect(try lookup("services.database.primary.host").encodedKey == "services.database.primary.host")
    }

    @Test("A stored key that contains dots is found when no nested value answers")
    func literalDottedKey() throws {
        suite.set("literal", forKey: "log.level")
        #expect(try lookup("log.level").value?.content == .string("literal"))
        suite.set(["level": "nested"], forKey: "log")
        #expect(try lookup("log.level").value?.content == .string("nested"))
    }

    @Test("A dictionary, a missing key, or a path through a non-dictionary is not found")
    func notFound() throws {
        suite.set(["timeout": 5], forKey: "http")
        suite.set("plain", forKey: "name")
        #expect(try lookup("http").value == nil)
        #expect(try lookup("http.missing", .int).value == nil)
        #expect(try lookup("name.first").value == nil)
        #expect(try lookup("absent").value == nil)
    }

    @Test("The secrets specifier marks values by dotted key")
    func secrets() throws {
        suite.set(["token": "s3cret", "user": "me"], forKey: "api")
        let provider = DefaultsProvider(suite: suite, secretsSpecifier: .specific(["api.token"]))
        let token = try provider.value(forKey: ["api", "token"], type: .string)
        let user = try provider.value(forKey: ["api", "user"], type: .string)
        #expect(token.value?.isSecret == true)
        #expect(user.value?.isSecret == false)
        #expect(token.value?.description.contains("s3cret") == false)
    }
}

@Suite("DefaultsProvider over a file suite's administrator layers", .mayBlock)
struct DefaultsProviderAdministratorTests {
    @Test("Managed values win over the user's, the user's over the vendor's; a change to them is watched")
    func layers() async throws {
        let sandbox = try ProviderSandbox()
        let administrator = sandbox.directory.appendingPathComponent("xdg", isDirectory: true)
        let managed = administrator.appendingPathComponent("managed", isDirectory: true)
        try FileManager.default.createDirectory(at: managed, withIntermediateDirectories: true)
        try PropertyList.encodeXML(["http": ["timeout": 10], "log": ["level": "info"]])
            .write(to: administrator.appendingPathComponent(sandbox.name + ".plist"))
        let suite = sandbox.suite(administratorDirectories: [administrator])
        suite.set(["timeout": 60], forKey: "http")
        let config = ConfigReader(provider: DefaultsProvider(suite: suite))
        #expect(config.int(forKey: "http.timeout") == 60)
        #expect(config.string(forKey: "log.level") == "info")
        let seen = try await withTimeout {
            try await config.watchInt(forKey: "http.timeout", default: 30) { updates in
                var seen: [Int] = []
                for await timeout in updates {
                    seen.append(timeout)
                    if seen.count == 1 {
                        try PropertyList.encodeXML(["http": ["timeout": 5]])
                            .write(to: managed.appendingPathComponent(sandbox.name + ".plist"), options: .atomic)
                    }
                    if timeout == 5 { break }
                }
                return seen
            }
        }
        #expect(seen == [60, 5])
        #expect(config.int(forKey: "http.timeout") == 5)
    }

    /// Each domain answers a key in either spelling, flat (`http.timeout`) or nested
    /// (`http = { timeout }`), before the next domain is asked: a managed `http.timeout` wins over
    /// the user's nested `http`, and the user's flat `http.timeout` over the vendor's nested one.
    @Test(
        "Precedence holds across spellings: managed above user above vendor, flat or nested",
        arguments: [(managedFlat: true, userFlat: false), (managedFlat: false, userFlat: true)])
    func precedenceAcrossSpellings(managedFlat: Bool, userFlat: Bool) throws {
        let sandbox = try ProviderSandbox()
        let administrator = sandbox.directory.appendingPathComponent("xdg", isDirectory: true)
        let managed = administrator.appendingPathComponent("managed", isDirectory: true)
        try FileManager.default.createDirectory(at: managed, withIntermediateDirectories: true)
        func spelled(_ key: String, _ leaf: String, _ value: Any, flat: Bool) -> [String: Any] {
            flat ? ["\(key).\(leaf)": value] : [key: [leaf: value]]
        }
        try PropertyList.encodeXML(spelled("http", "timeout", 5, flat: managedFlat))
            .write(to: managed.appendingPathComponent(sandbox.name + ".plist"))
        try PropertyList.encodeXML(
            spelled("http", "timeout", 30, flat: !userFlat).merging(spelled("log", "level", "vendor", flat: !userFlat))
            {
                $1
            }
        ).write(to: administrator.appendingPathComponent(sandbox.name + ".plist"))
        let suite = sandbox.suite(administratorDirectories: [administrator])
        for (key, value) in spelled("http", "timeout", 60, flat: userFlat).merging(
            spelled("log", "level", "user", flat: userFlat), uniquingKeysWith: { $1 })
        {
            suite.set(value, forKey: key)
        }
        let config = ConfigReader(provider: DefaultsProvider(suite: suite))
        #expect(config.int(forKey: "http.timeout") == 5)  // managed, whatever the user's spelling
        #expect(config.string(forKey: "log.level") == "user")  // the user's, over the vendor's
    }
}
