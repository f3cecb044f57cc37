import DefaultsPropertyList
import DefaultsTerminalText
import Foundation

/// Printing, unbuffered, so that `watch` shows each change at once and a failing command's
/// message is out before it exits.
///
/// Every printer goes through `TerminalText`'s one rule for text from outside (a file, a schema,
/// another machine): a ``Line`` escapes what is interpolated into it, to a terminal or a pipe; a
/// value printed on its own (``printValue(_:)``, ``writeValue(_:)``) is escaped only for a
/// terminal, so that a script reads its bytes; JSON escapes per JSON; errors are escaped always.
package enum Output {
    /// A line of output: its literal text is the command's own, and every value interpolated into
    /// it is text from outside, escaped as one line (`\(description)`), or a value's old-style text
    /// (`\(value: value)`) with a collection's layout kept.
    package struct Line: ExpressibleByStringInterpolation {
        package fileprivate(set) var text: String

        package init(stringLiteral text: String) {
            self.text = text
        }

        package init(stringInterpolation: StringInterpolation) {
            text = stringInterpolation.text
        }

        package static func += (line: inout Line, other: Line) {
            line.text += other.text
        }

        package struct StringInterpolation: StringInterpolationProtocol {
            fileprivate var text = ""

            package init(literalCapacity: Int, interpolationCount: Int) {
                text.reserveCapacity(literalCapacity + 16 * interpolationCount)
            }

            package mutating func appendLiteral(_ literal: String) {
                text += literal
            }

            /// Text from outside (a name, a description, a path, a number), escaped as one line.
            package mutating func appendInterpolation(_ outside: some CustomStringConvertible) {
                text += TerminalText.escaped(outside.description)
            }

            /// A line already made, as it is.
            package mutating func appendInterpolation(_ line: Line) {
                text += line.text
            }

            /// `value` as old-style text (``Output/text(_:)``): a collection laid out over lines
            /// as `read` prints it (its strings are quoted and escaped), a string as one line.
            package mutating func appendInterpolation(value: PropertyListValue) {
                switch value {
                case .array, .dictionary: text += TerminalText.escaped(Output.text(value), layout: .lines)
                default: text += TerminalText.escaped(Output.text(value))
                }
            }
        }
    }

    /// Writes `line` and a newline to standard output.
    package static func print(_ line: Line) {
        FileHandle.standardOutput.write(Data((line.text + "\n").utf8))
    }

    /// Writes JSON text and a newline to standard output, with the controls JSON lets a string
    /// hold as they are written as `\uXXXX` escapes.
    package static func printJSON(_ json: String) {
        FileHandle.standardOutput.write(Data((TerminalText.jsonEscaped(json) + "\n").utf8))
    }

    /// Writes JSON as ``printJSON(_:)`` does, from its UTF-8 bytes.
    package static func printJSON(_ json: Data) {
        printJSON(String(decoding: json, as: UTF8.self))
    }

    /// Writes a value's own bytes to standard output (an exported property list): as they are to
    /// a pipe or a file, escaped with their lines kept to a terminal.
    package static func writeValue(_ data: Data) {
        guard TerminalText.standardOutputIsTerminal else {
            FileHandle.standardOutput.write(data)
            return
        }
        data.withUnsafeBytes { bytes in
            FileHandle.standardOutput.write(Data(TerminalText.escaped(bytes, layout: .lines)))
        }
    }

    /// Writes the old-style text of `value` (see ``text(_:)``) and a newline to standard output,
    /// in pieces as it is made: a large domain's text is never held whole. A string is written as
    /// it is to a pipe or a file, for scripts, and escaped with its lines kept to a terminal.
    package static func printValue(_ value: Any) {
        let isTerminal = TerminalText.standardOutputIsTerminal
        PropertyList.writeOpenStepDescription(value) { bytes in
            // A collection's text is ASCII (the writer escapes its strings), so a piece never
            // splits a character; a top-level string comes in one piece.
            FileHandle.standardOutput.write(
                isTerminal ? Data(TerminalText.escaped(bytes, layout: .lines)) : Data(bytes))
        }
        FileHandle.standardOutput.write(Data("\n".utf8))
    }

    /// Lines collected and written in pieces of about 64 KB, so that a listing of many lines
    /// costs a few writes rather than one a line. ``flush()`` writes the rest.
    package struct BufferedLines {
        private var text = ""

        package init() {}

        package mutating func print(_ line: Line) {
            text += line.text
            text += "\n"
            if text.utf8.count >= 1 << 16 {
                flush()
            }
        }

        package mutating func flush() {
            guard !text.isEmpty else { return }
            FileHandle.standardOutput.write(Data(text.utf8))
            text = ""
        }
    }

    /// Writes `message` and a newline to standard error, escaped always as one line (standard
    /// error is usually a terminal, and a message may quote what a file holds).
    package static func printError(_ message: String) {
        FileHandle.standardError.write(Data((TerminalText.escaped(message) + "\n").utf8))
    }

    /// Writes `failure`'s message, then each of its own following lines, to standard error.
    package static func printError(_ failure: CommandFailure) {
        printError(failure.message)
        for line in failure.followingLines {
            printError(line)
        }
    }

    // MARK: Text

    /// Old-style text, as macOS `defaults read` prints: `{ key = value; }` laid out over lines,
    /// a top-level string, number or date without quotes.
    package static func text(_ value: Any) -> String {
        PropertyList.openStepDescription(value)
    }

    /// `key = value;` on one line, quoted as in `defaults read`'s output: the entry's lines
    /// joined, with whitespace outside quoted strings folded into single spaces.
    package static func entryLine(key: String, value: Any) -> String {
        let description = PropertyList.openStepDescription([key: value])
        // `{\n    key = value;\n}`: the entry is between the braces.
        let inner = description.dropFirst().dropLast()
        return foldingWhitespace(inner)
    }

    /// `key` quoted as `defaults read` quotes it, when it needs quotes.
    package static func quotedKey(_ key: String) -> String {
        PropertyList.openStepQuoted(key)
    }

    /// Folds each run of whitespace outside double-quoted strings into one space and trims the
    /// ends; quoted strings (with their backslash escapes) are kept as they are.
    private static func foldingWhitespace(_ text: Substring) -> String {
        var result = ""
        var isQuoted = false
        var isEscaped = false
        var pendingSpace = false
        for character in text {
            if isQuoted {
                result.append(character)
                if isEscaped {
                    isEscaped = false
                } else if character == "\\" {
                    isEscaped = true
                } else if character == "\"" {
                    isQuoted = false
                }
                continue
            }
            if character.isWhitespace {
                pendingSpace = !result.isEmpty
                continue
            }
            if pendingSpace {
                result.append(" ")
                pendingSpace = false
            }
            result.append(character)
            if character == "\"" {
                isQuoted = true
            }
        }
        return result
    }

    // MARK: JSON

    /// `value` as JSON: dictionaries with sorted keys, dates as ISO 8601 strings in UTC, data as
    /// base64 strings, non-finite reals as the strings `nan`, `+infinity`, `-infinity`.
    package static func json(_ value: PropertyListValue, pretty: Bool = true) -> String {
        var writer = JSONWriter(pretty: pretty)
        writer.write(value, level: 0)
        return writer.text
    }

    /// A value held as `Any` (a suite's object) as JSON; one with no property-list form as a
    /// string of its description.
    package static func json(_ object: Any, pretty: Bool = true) -> String {
        json((try? PropertyListValue(object)) ?? .string("\(object)"), pretty: pretty)
    }
}

/// A small JSON writer with a fixed layout (sorted keys, two-space indentation), so output is the
/// same on every platform and for every run.
private struct JSONWriter {
    package let pretty: Bool
    package var text = ""

    package init(pretty: Bool) {
        self.pretty = pretty
    }

    package mutating func write(_ value: PropertyListValue, level: Int) {
        switch value {
        case .string(let string):
            writeString(string)
        case .integer(let integer):
            text += String(integer)
        case .unsignedInteger(let integer):
            text += String(integer)
        case .real(let real):
            if real.isNaN {
                writeString("nan")
            } else if real.isInfinite {
                writeString(real < 0 ? "-infinity" : "+infinity")
            } else {
                text += "\(real)"
            }
        case .boolean(let boolean):
            text += boolean ? "true" : "false"
        case .date(let date):
            writeString(Self.isoText(date))
        case .data(let data):
            writeString(data.base64EncodedString())
        case .array(let array):
            writeContainer(open: "[", close: "]", count: array.count, level: level) { writer, index in
                writer.write(array[index], level: level + 1)
            }
        case .dictionary(let dictionary):
            let entries = dictionary.sorted { $0.key < $1.key }
            writeContainer(open: "{", close: "}", count: entries.count, level: level) { writer, index in
                writer.writeString(entries[index].key)
                writer.text += writer.pretty ? ": " : ":"
                writer.write(entries[index].value, level: level + 1)
            }
        }
    }

    private mutating func writeContainer(
        open: String, close: String, count: Int, level: Int, element: (inout JSONWriter, Int) -> Void
    ) {
        text += open
        guard count > 0 else {
            text += close
            return
        }
        for index in 0..<count {
            if index > 0 { text += "," }
            if pretty { text += "\n" + String(repeating: "  ", count: level + 1) }
            element(&self, index)
        }
        if pretty { text += "\n" + String(repeating: "  ", count: level) }
        text += close
    }

    private mutating func writeString(_ string: String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            default:
                // The other C0 controls, and DEL, C1 and the bidirectional controls, which JSON
                // allows as they are but a terminal obeys.
                if TerminalText.isControl(scalar) {
                    TerminalText.appendJSONEscape(scalar, to: &text)
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }

    /// `2024-01-02T03:04:05Z`, or with fractional seconds when the date has them.
    private static func isoText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        if date.timeIntervalSinceReferenceDate.rounded(.down) != date.timeIntervalSinceReferenceDate {
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        }
        return formatter.string(from: date)
    }
}
