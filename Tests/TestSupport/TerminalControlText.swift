import Foundation

/// Text a terminal obeys rather than shows, as a hostile file, schema or machine could plant it,
/// and how the commands print it: for the tests that what they print of outside text is safe.
public enum TerminalControlText {
    /// Writes the clipboard (OSC 52), sets the window's title (OSC 0), erases the line and moves
    /// up (CSI 2K, CSI 1A) to forge a line, clears the screen by a C1 CSI (U+009B), reverses the
    /// rest (U+202E), isolates (U+2066…U+2069), and deletes (DEL).
    public static let hostile =
        "\u{1B}]52;c;Y2xpcGJvYXJk\u{07}\u{1B}]0;title\u{07}\u{1B}[2K\u{1B}[1Aforged\u{9B}2J"
        + "\u{202E}desrever\u{2066}isolated\u{2069}\u{7F}"

    /// ``hostile`` as the commands print it: each control escaped as in a Swift string literal.
    public static let shown =
        #"\u{1B}]52;c;Y2xpcGJvYXJk\u{7}\u{1B}]0;title\u{7}\u{1B}[2K\u{1B}[1Aforged\u{9B}2J"#
        + #"\u{202E}desrever\u{2066}isolated\u{2069}\u{7F}"#

    /// Whether ``runOnTerminal(_:_:environment:)`` can run: it needs `python3` and its `pty` module.
    public static let canRunOnTerminal =
        (try? ChildProcess.run(envPath, ["python3", "-c", "import pty"]).status) == 0

    /// Runs `executable arguments…` with a pseudo-terminal as its standard output and error (Python's
    /// `pty.spawn`, which, unlike util-linux's `script`, ends with the command even when its own
    /// standard input is at its end, as CI's is), and returns what the terminal received as the
    /// output, its line ends (CR LF) as LF.
    public static func runOnTerminal(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> ChildProcess.Result {
        let spawn = "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))"
        var result = try ChildProcess.run(
            envPath, ["python3", "-c", spawn, executable] + arguments, environment: environment)
        result.outputData = Data(result.output.replacingOccurrences(of: "\r\n", with: "\n").utf8)
        return result
    }

    /// `env`, which finds `python3`.
    private static let envPath = "/usr/bin/env"

    /// The characters of `bytes` (UTF-8) that a terminal obeys, other than a line feed and a tab,
    /// as hexadecimal code points: C0 controls, DEL, C1 controls, bidirectional controls.
    public static func rawControls(in bytes: some Sequence<UInt8>) -> [String] {
        String(decoding: Array(bytes), as: UTF8.self).unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A, 0x09: false
            case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
            default: false
            }
        }.map { String($0.value, radix: 16) }
    }
}
