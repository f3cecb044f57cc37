import Configuration
import Defaults
import DefaultsConfiguration
import Foundation
import TestSupport
import Testing

@Suite("README: swift-configuration", .mayBlock)
struct ReadmeConfigurationExampleTests {
    @Test("The README's example reads the environment first, then the suite")
    func example() throws {
        let sandbox = try ProviderSandbox()
        let settings = sandbox.suite()
        settings.set(["timeout": 60], forKey: "http")
        // The README's code, with the environment and the suite's directory given by the test.
        for (environment, expected) in [([:], 60), (["HTTP_TIMEOUT": "5"], 5)] {
            let config = ConfigReader(providers: [
                EnvironmentVariablesProvider(environmentVariables: environment),
                DefaultsProvider(suite: settings),
            ])
            let timeout = config.int(forKey: "http.timeout", default: 30)
            #expect(timeout == expected)
        }
    }
}
