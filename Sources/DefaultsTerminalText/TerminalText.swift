#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule for printing text that a file, a schema, a database or another machine holds: the
/// characters a terminal obeys rather than shows are escaped visibly, so that such text can neither
/// write the clipboard, set the window's title, move the cursor, erase or forge lines, nor reorder
/// what is shown.
///
/// Escaped are the C0 controls (U+0000–U+001F; a line break and a tab are kept only in a value's
/// own text laid out over lines, ``Layout/lines``), DEL (U+007F), the C1 controls (U+0080–U+009F)
/// and the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). Each is
/// written as in a Swift string literal: `\n`, `\r`, `\t`, else `\u{1B}` (uppercase hexadecimal).
/// A backslash is kept as it is, so ordinary text prints unchanged.
package enum TerminalText {
    /// How a text is laid out, which decides whether its line breaks and tabs are kept.
    package enum Layout: Sendable {
        /// A piece of one line (a name, a description, a path, a reason): a line break would
        /// forge a line, so it is escaped too.
        case oneLine
        /// A value's own text printed on its own, whose lines and tabs are its layout.
        case lines
    }

    /// Whether the process's standard output is a terminal, asked once: a value printed on its own
    /// goes to a pipe as its bytes, for scripts, and to a terminal escaped.
    package static let standardOutputIsTerminal = isatty(STDOUT_FILENO) == 1

    /// Whether a terminal would obey `scalar` rather than show it: a C0 or C1 control, DEL, or a
    /// bidirectional control. Line breaks and tabs are among them; ``escaped(_:layout:)`` keeps
    /// them in ``Layout/lines``.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` with every control escaped (see ``TerminalText``); `text` itself when none is in it,
    /// found by a scan of its bytes.
    package static func escaped(_ text: String, layout: Layout = .oneLine) -> String {
        var text = text
        let clean = text.withUTF8 { !mayNeedEscaping($0, layout: layout) }
        guard !clean else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            appendEscaped(scalar, layout: layout, to: &result)
        }
        return result
    }

    /// `bytes` (UTF-8) escaped as ``escaped(_:layout:)`` escapes a text; handed on as they are when
    /// no byte needs it. A character split between two calls is not recognized, so `bytes` holds
    /// whole characters.
    package static func escaped(_ bytes: UnsafeRawBufferPointer, layout: Layout) -> [UInt8] {
        let utf8 = bytes.bindMemory(to: UInt8.self)
        // Bytes that are not UTF-8 go the slow way too, and come out as U+FFFD: a lone 0x9B is
        // CSI to a terminal in an 8-bit mode.
        guard mayNeedEscaping(utf8, layout: layout) || String(validating: utf8, as: UTF8.self) == nil else {
            return Array(utf8)
        }
        return Array(escaped(String(decoding: utf8, as: UTF8.self), layout: layout).utf8)
    }

    /// Writes a command-line parser's report of a mistake in the arguments to standard error (and
    /// nothing when `report` is empty, as for an exit status thrown alone). `report` is the
    /// parser's whole text: `message`, the part that quotes the arguments, then help and usage of
    /// its own. Arguments come from files and other programs (`xargs`, scripts), so `message` is
    /// escaped as one line, a line break in an argument forging no line; the rest keeps its lines.
    package static func printArgumentError(_ report: String, quoting message: String) {
        guard !report.isEmpty else { return }
        var text: String
        if !message.isEmpty, let range = report.firstRange(of: message) {
            text = escaped(String(report[..<range.lowerBound]), layout: .lines) + escaped(message)
            text += escaped(String(report[range.upperBound...]), layout: .lines)
        } else {
            text = escaped(report, layout: .lines)
        }
        text += "\n"
        text.withUTF8 { bytes in
            var written = 0
            while written < bytes.count {
                let count = write(STDERR_FILENO, bytes.baseAddress! + written, bytes.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                written += count
            }
        }
    }

    /// JSON text with the controls that JSON lets a string hold as they are (DEL, C1, the
    /// bidirectional controls) written as `\uXXXX` escapes instead, so that it stays the same JSON
    /// and is safe to show. Those characters can only be inside strings of valid JSON.
    package static func jsonEscaped(_ json: String) -> String {
        var json = json
        let clean = json.withUTF8 { !mayNeedEscaping($0, layout: .lines) }
        guard !clean else { return json }
        var result = ""
        result.reserveCapacity(json.utf8.count + 16)
        for scalar in json.unicodeScalars {
            if scalar.value >= 0x20, isControl(scalar) {
                appendJSONEscape(scalar, to: &result)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Appends `scalar` as JSON's `\uXXXX` escape (four lowercase hexadecimal digits), for a
    /// character of the Basic Multilingual Plane, as every control is.
    package static func appendJSONEscape(_ scalar: Unicode.Scalar, to text: inout String) {
        let hex = String(scalar.value, radix: 16)
        text += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private static func appendEscaped(_ scalar: Unicode.Scalar, layout: Layout, to result: inout String) {
        switch scalar {
        case "\n" where layout == .lines, "\t" where layout == .lines:
            result.unicodeScalars.append(scalar)
        case "\n": result += "\\n"
        case "\t": result += "\\t"
        case "\r": result += "\\r"
        case _ where isControl(scalar):
            result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        default:
            result.unicodeScalars.append(scalar)
        }
    }

    /// `false` when no byte of `utf8` can start a control: the fast path of a text with none. The
    /// lead bytes of a C1 control (0xC2), of U+061C (0xD8) and of the other bidirectional
    /// controls (0xE2) answer `true` whatever follows them; the escaping then looks closer.
    private static func mayNeedEscaping(_ utf8: UnsafeBufferPointer<UInt8>, layout: Layout) -> Bool {
        let keepsLines = layout == .lines
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\t"):
                if !keepsLines { return true }
            case 0..<0x20, 0x7F, 0xC2, 0xD8, 0xE2:
                return true
            default:
                continue
            }
        }
        return false
    }
}
