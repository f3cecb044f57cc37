@_spi(Testing) import Defaults
import DefaultsPropertyList
import Foundation

#if canImport(Glibc)
import Glibc

private let fileSizeResource = Int32(RLIMIT_FSIZE.rawValue)
#elseif canImport(Darwin)
import Darwin

private let fileSizeResource = RLIMIT_FSIZE
#endif

/// Commands that exercise `FileSuite` from a real process. Most take the suite's directory and
/// name first.
enum FileSuiteCommands {
    static func suite(_ arguments: [String]) -> FileSuite {
        FileSuite(name: arguments[1], directory: URL(fileURLWithPath: arguments[0], isDirectory: true), arguments: [])
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(1)
    }

    /// Writes a line straight to the output, unbuffered, so that a parent that kills this
    /// process has seen every line printed before.
    static func printFlushed(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// `filesuite-set DIR NAME KEY VALUE [--no-flush]`: stores VALUE (property-list text, so `5`
    /// is the string "5" and `<integer>5</integer>` the integer), flushes unless told not to, and
    /// exits normally (pending writes are then flushed at exit).
    static func set(_ arguments: [String]) {
        let suite = suite(arguments)
        let value = (try? PropertyList.parseText(arguments[3])) ?? arguments[3]
        suite.set(value, forKey: arguments[2])
        if !arguments.contains("--no-flush") {
            do { try suite.flush() } catch { fail("\(error)") }
        }
        printFlushed("ok")
    }

    /// `filesuite-get DIR NAME KEY`: prints the value in old-style text, or `(absent)`.
    static func get(_ arguments: [String]) {
        let object = suite(arguments).object(forKey: arguments[2])
        printFlushed(object.map(PropertyList.openStepDescription) ?? "(absent)")
    }

    /// `filesuite-write-keys DIR NAME PREFIX COUNT FLUSH_EVERY`: writes PREFIX0…PREFIX(COUNT-1)
    /// with their index as value, flushing every FLUSH_EVERY writes and at the end.
    static func writeKeys(_ arguments: [String]) {
        let suite = suite(arguments)
        let prefix = arguments[2]
        guard let count = Int(arguments[3]), let flushEvery = Int(arguments[4]) else { fail("bad arguments") }
        // A flush that waited out the lock's wait (others held it throughout, on a busy machine)
        // keeps the values in memory for the next: a program flushes again, and so does this one.
        func flush() throws {
            for attempt in 1...5 {
                do {
                    return try suite.flush()
                } catch let error as DefaultsError where error.kind == .lockFailed && attempt < 5 {
                    continue
                }
            }
        }
        do {
            for index in 0..<count {
                suite.set(index, forKey: "\(prefix)\(index)")
                if (index + 1) % flushEvery == 0 { try flush() }
            }
            try flush()
        } catch {
            fail("\(error)")
        }
        printFlushed("ok")
    }

    /// `filesuite-ack-loop DIR NAME`: continues a sequence of writes where the file left it. Write
    /// `i` sets `slot<i % 10>` and `last` to `i`; after its flush returns it prints `i`. Runs until
    /// killed.
    static func acknowledgeLoop(_ arguments: [String]) {
        let suite = suite(arguments)
        var index = ((suite.object(forKey: "last") as? Int) ?? -1) + 1
        printFlushed("ready")
        while true {
            suite.set(index, forKey: "slot\(index % 10)")
            suite.set(index, forKey: "last")
            do { try suite.flush() } catch { fail("\(error)") }
            printFlushed("\(index)")
            index += 1
        }
    }

    /// `filesuite-wait-signal DIR NAME KEY VALUE`: sets KEY without flushing, prints `ready`, and
    /// waits to be ended by a signal.
    static func waitForSignal(_ arguments: [String]) {
        // Start as a process launched from a shell does: the test runner spawns this from a
        // thread that blocks signals, and a non-interactive shell ignores SIGINT in background jobs.
        var signals = sigset_t()
        sigemptyset(&signals)
        for number in [SIGTERM, SIGINT] {
            sigaddset(&signals, number)
            signal(number, SIG_DFL)
        }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        let suite = suite(arguments)
        suite.set(arguments[3], forKey: arguments[2])
        printFlushed("ready")
        while true {
            sleep(60)
        }
    }

    /// `filesuite-file-size-limit DIR NAME`: with the file size limit below the file's size, a
    /// flush fails (as on a full disk) and the value stays in memory; after raising the limit the
    /// next flush stores it. Prints one line per step.
    static func fileSizeLimit(_ arguments: [String]) {
        let suite = suite(arguments)
        // Beyond the limit a write fails with EFBIG instead of the signal ending the process.
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit()
        getrlimit(fileSizeResource, &limit)
        var small = limit
        small.rlim_cur = 100
        setrlimit(fileSizeResource, &small)
        suite.set(String(repeating: "x", count: 10_000), forKey: "big")
        do {
            try suite.flush()
            printFlushed("flush succeeded")
        } catch let error as DefaultsError {
            printFlushed("flush failed: \(error.kind)")
        } catch {
            printFlushed("flush failed: \(error)")
        }
        printFlushed("in memory: \((suite.object(forKey: "big") as? String)?.count ?? 0)")
        printFlushed("problems: \(suite.problems.map { "\($0.kind)" }.joined(separator: ","))")
        setrlimit(fileSizeResource, &limit)
        do {
            try suite.flush()
            printFlushed("retry succeeded")
        } catch {
            printFlushed("retry failed: \(error)")
        }
    }

    // MARK: Foundation interop

    /// Values both sides write and expect, as property-list objects.
    static var interopSample: [String: Any] {
        [
            "int": 42,
            "negative": -7,
            "large": Int(Int64.max),
            "double": 3.25,
            "bool": true,
            "string": "a < b & \"c\" é 🎉",
            "date": Date(timeIntervalSince1970: 1_700_000_000),
            "data": Data([0, 1, 2, 254, 255]),
            "array": [1, "two", 3.5] as [Any],
            "dictionary": ["nested": ["x": 1, "y": false] as [String: Any]] as [String: Any],
        ]
    }

    /// The sample's keys and values in a canonical text form that names each value's type, for
    /// comparing processes' views.
    static func describe(_ values: [String: Any]) -> String {
        let normalized = (try? PropertyList.normalize(values)) ?? values
        return taggedDescription(normalized)
    }

    static func taggedDescription(_ value: Any) -> String {
        switch value {
        case let value as String: "string(\(value.debugDescription))"
        case let value as Bool: "bool(\(value))"
        case let value as Int: "int(\(value))"
        case let value as UInt64: "uint64(\(value))"
        case let value as Double: "real(\(value))"
        case let value as Date: "date(\(value.timeIntervalSince1970))"
        case let value as Data: "data(\(value.map { String($0) }.joined(separator: ",")))"
        case let value as [Any]: "[" + value.map(taggedDescription).joined(separator: ", ") + "]"
        case let value as [String: Any]:
            "{"
                + value.keys.sorted().map { "\($0.debugDescription): \(taggedDescription(value[$0] ?? "?"))" }.joined(
                    separator: ", ") + "}"
        default: "unknown(\(type(of: value)))"
        }
    }

    /// `sample-describe`: prints the interop sample itself, the expected output of the readers.
    static func describeExpectedSample(_ arguments: [String]) {
        printFlushed(describe(interopSample))
    }

    /// `foundation-write SUITE`: writes the sample with `UserDefaults(suiteName:)` and
    /// synchronizes (the directory comes from `XDG_CONFIG_HOME`).
    static func foundationWrite(_ arguments: [String]) {
        guard let defaults = UserDefaults(suiteName: arguments[0]) else { fail("no suite") }
        for (key, value) in interopSample {
            defaults.set(value, forKey: key)
        }
        guard defaults.synchronize() else { fail("synchronize failed") }
        printFlushed("ok")
    }

    /// `foundation-read SUITE`: prints the sample's keys as Foundation's `UserDefaults` reads them.
    static func foundationRead(_ arguments: [String]) {
        guard let defaults = UserDefaults(suiteName: arguments[0]) else { fail("no suite") }
        var values: [String: Any] = [:]
        for key in interopSample.keys {
            values[key] = defaults.object(forKey: key)
        }
        printFlushed(describe(values))
    }

    /// `filesuite-describe DIR NAME`: prints the sample's keys as a file suite reads them.
    static func describeSample(_ arguments: [String]) {
        let suite = suite(arguments)
        var values: [String: Any] = [:]
        for key in interopSample.keys {
            values[key] = suite.object(forKey: key)
        }
        printFlushed(describe(values))
    }

    // MARK: Types

    /// `types-write DIR NAME`: stores a value of every built-in type through typed keys, and
    /// exits normally without flushing (the exit handler does).
    static func typesWrite(_ arguments: [String]) {
        let keys = TypeSampleKeys(suite: suite(arguments))
        keys.writeAll()
        printFlushed("ok")
    }

    /// `types-read DIR NAME`: reads every typed key back and prints `OK` or what differs.
    static func typesRead(_ arguments: [String]) {
        let keys = TypeSampleKeys(suite: suite(arguments))
        let mismatches = keys.mismatches()
        printFlushed(mismatches.isEmpty ? "OK" : mismatches.joined(separator: "\n"))
    }
}

struct SampleCodable: Codable, Hashable, Defaults.Serializable {
    var name: String
    var scores: [Int]
    var nested: [String: Double]
}

enum SampleRawEnum: String, Defaults.Serializable {
    case alpha, beta
}

enum SampleCodableEnum: String, Codable, Defaults.Serializable {
    case on, off
}

/// A value of every built-in type, the typed keys that hold them, and a check that they read back.
struct TypeSampleKeys {
    private var writers: [() -> Void] = []
    private var checkers: [() -> String?] = []

    init(suite: FileSuite) {
        func add<Value: Defaults.Serializable & Equatable>(_ name: String, _ value: Value, _ defaultValue: Value) {
            let key = Defaults.Key<Value>(name, default: defaultValue, suite: suite)
            writers.append { Defaults[key] = value }
            checkers.append {
                let read = Defaults[key]
                return read == value ? nil : "\(name): expected \(value), read \(read)"
            }
        }
        add("int", Int.min, 0)
        add("int8", Int8.min, 0)
        add("int16", Int16.max, 0)
        add("int32", Int32.min, 0)
        add("int64", Int64.max, 0)
        add("uint", UInt.max, 0)
        add("uint8", UInt8.max, 0)
        add("uint16", UInt16.max, 0)
        add("uint32", UInt32.max, 0)
        add("uint64", UInt64.max, 0)
        add("double", 0.1 + 0.2, 0)
        add("float", Float(1.1), 0)
        add("cgfloat", CGFloat(2.5), 0)
        add("string", "tab\t newline\n <xml> & \"quotes\" é 🎉", "")
        add("emptyString", "", "default")
        add("bool", true, false)
        // XML property lists keep dates to the second, in Foundation's format as in this one.
        add("date", Date(timeIntervalSince1970: 1_700_000_123), Date(timeIntervalSince1970: 0))
        add("data", Data([0, 1, 2, 3, 255]), Data())
        add("url", URL(string: "https://example.com/a%20b?q=1#frag")!, URL(fileURLWithPath: "/"))
        add("fileURL", URL(fileURLWithPath: "/tmp/some file.txt"), URL(fileURLWithPath: "/"))
        add("uuid", UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, UUID())
        add("range", 1..<10, 0..<1)
        add("closedRange", 2.5...7.5, 0.0...1.0)
        add(
            "codable", SampleCodable(name: "n", scores: [1, 2], nested: ["pi": 3.14]),
            SampleCodable(name: "", scores: [], nested: [:]))
        add("rawEnum", SampleRawEnum.beta, .alpha)
        add("codableEnum", SampleCodableEnum.off, .on)
        add("optional", Int?.some(5), nil)
        add("optionalString", String?.some("x"), nil)
        add("array", [1, 2, 3], [])
        add("set", Set(["a", "b", "c"]), [])
        add("dictionary", ["a": 1, "b": 2], [:])
        add("nested", [["x": [1, 2]], ["y": [3]]], [])
        add("dictionaryOfArrays", ["k": [SampleCodable(name: "m", scores: [], nested: [:])]], [:])
        add("enumArray", [SampleRawEnum.alpha, .beta], [])
    }

    func writeAll() {
        for write in writers { write() }
    }

    func mismatches() -> [String] {
        checkers.compactMap { $0() }
    }
}
