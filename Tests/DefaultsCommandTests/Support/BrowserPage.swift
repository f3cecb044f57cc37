import Foundation
import TestSupport

/// The editor's page in headless Chromium, driven through `Tests/Browser/editor-driver.py`
/// (Selenium, from Debian's `python3-selenium`, with `chromium` and `chromium-driver`): the test
/// says what a person does, and reads back what the page shows.
final class BrowserPage {
    /// Debian's Python, which has Debian's Selenium (a `python3` earlier on the PATH may not).
    static let python = "/usr/bin/python3"
    static let driver = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser/editor-driver.py").path

    /// Whether Chromium, its driver and Selenium are all installed (`.ci/run` installs them).
    static let isAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        return (try? ChildProcess.run(python, [driver, "--check"]).termination) == .exited(0)
    }()

    private let process: ChildProcess
    private var answered = 0

    init() throws {
        process = try ChildProcess(Self.python, [Self.driver], input: .pipe)
    }

    deinit {
        try? process.write("{\"do\": \"quit\"}\n")
        process.closeInput()
        _ = try? process.finish()
    }

    struct DriverFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends one command and returns the driver's answer.
    @discardableResult
    func send(_ command: [String: Any]) throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: command)
        try process.write(data + Data("\n".utf8))
        let line = try process.line(after: answered) { _ in true }
        answered += 1
        // JSON's null is no value here, as in the page.
        guard
            let answer = (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?
                .filter({ !($0.value is NSNull) })
        else {
            throw DriverFailure(description: "not an answer: \(line)")
        }
        guard answer["ok"] as? Bool == true else {
            throw DriverFailure(
                description: "\(command["do"] ?? "?") failed: \(answer["error"] ?? "?"); "
                    + process.lines(.error).suffix(5).joined(separator: "\n"))
        }
        return answer
    }

    func open(_ address: String) throws -> [String: Any] { try send(["do": "open", "url": address]) }
    func row(_ key: String) throws -> [String: Any] { try send(["do": "row", "key": key]) }
    func set(_ key: String, to text: String) throws -> [String: Any] {
        try send(["do": "set", "key": key, "text": text])
    }
    func press(_ action: String, on key: String) throws -> [String: Any] { try send(["do": action, "key": key]) }
    func search(_ text: String) throws -> [String] {
        try send(["do": "search", "text": text])["shown"] as? [String] ?? []
    }
    /// Waits until the page shows `value` for `key` and returns how long that took, in ms.
    @discardableResult
    func waitForValue(_ value: String, of key: String, timeout: Double = 120) throws -> Double {
        try send(["do": "wait-value", "key": key, "value": value, "timeout": timeout])["ms"] as? Double ?? -1
    }
    func consoleErrors() throws -> [String] { try send(["do": "console"])["errors"] as? [String] ?? [] }
}
