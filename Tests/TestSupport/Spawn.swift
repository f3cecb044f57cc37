import Foundation

/// A child started with `posix_spawn`: its ID and this process's ends of its pipes.
///
/// Every descriptor made here is close-on-exec from its creation, so that a child started at the
/// same time by another test cannot inherit it and hold a pipe open; the child gets its three
/// standard descriptors and, where the C library can, nothing else.
struct Spawn {
    let id: pid_t
    /// The write end of the child's standard input, for ``ChildProcess/Input/pipe`` and
    /// ``ChildProcess/Input/data(_:)``.
    let input: Int32?
    let output: Int32
    let error: Int32

    /// Writing to a pipe whose reader has gone raises SIGPIPE, which would end the test process;
    /// ignored, the write fails with EPIPE instead. Children get the default back.
    private static let ignoresBrokenPipes: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// The signals a child gets with their default disposition, whatever this process did with
    /// them, and with none blocked: a child must see its signals as a freshly started program
    /// does.
    private static let defaultSignals = [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM]

    init(
        executable: String, arguments: [String], environment: [String: String], directory: String?,
        input: ChildProcess.Input, commandLine: String
    ) throws {
        _ = Self.ignoresBrokenPipes
        var opened: [Int32] = []
        var parentEnds: [Int32] = []
        defer {
            // The child's ends are the child's; on failure, ours go too.
            for descriptor in opened where !parentEnds.contains(descriptor) { close(descriptor) }
        }
        func makePipe() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [0, 0]
            guard Self.makeClosingPipe(&ends) == 0 else {
                throw ChildProcess.Failure(
                    description: "\(commandLine): pipe2 failed: \(String(cString: strerror(errno)))")
            }
            opened += ends
            return (ends[0], ends[1])
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var inputEnd: Int32?
        switch input {
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY, 0)
        case .pipe, .data:
            let pipe = try makePipe()
            posix_spawn_file_actions_adddup2(&actions, pipe.read, 0)
            inputEnd = pipe.write
        }
        let output = try makePipe()
        let error = try makePipe()
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, error.write, 2)
        if let directory {
            guard let addChangeDirectory = Self.addChangeDirectory else {
                throw ChildProcess.Failure(
                    description: "\(commandLine): this C library cannot set a child's working directory")
            }
            _ = addChangeDirectory(&actions, directory)
        }
        _ = Self.addCloseFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in Self.defaultSignals { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var id: pid_t = 0
        let result = posix_spawn(&id, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            let reason = String(cString: strerror(result))
            let place = directory.map { " in \($0)" } ?? ""
            throw ChildProcess.Failure(description: "cannot start \(commandLine)\(place): \(reason)")
        }
        self.id = id
        self.input = inputEnd
        self.output = output.read
        self.error = error.read
        parentEnds = [inputEnd, output.read, error.read].compactMap { $0 }
    }

    private typealias FileAction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias CloseFromAction =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29), which Swift's Glibc module does not
    /// declare.
    private static let addChangeDirectory: FileAction? = symbol("posix_spawn_file_actions_addchdir_np")

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34): closes what a library opened
    /// without close-on-exec, so a child holds nothing of this process's.
    private static let addCloseFrom: CloseFromAction? = symbol("posix_spawn_file_actions_addclosefrom_np")

    /// `pipe2(_, O_CLOEXEC)`, which Swift's Glibc module does not declare: both ends are
    /// close-on-exec from their creation, before another thread can start a child.
    private static func makeClosingPipe(_ ends: UnsafeMutablePointer<Int32>) -> Int32 {
        if let pipe2 = Self.pipe2 { return pipe2(ends, O_CLOEXEC) }
        guard pipe(ends) == 0 else { return -1 }
        // Without pipe2 a child started meanwhile may inherit the ends; `addCloseFrom` closes them.
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        return 0
    }

    private static let pipe2: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32)? = symbol("pipe2")

    private static func symbol<Function>(_ name: String) -> Function? {
        dlsym(dlopen(nil, RTLD_NOW), name).map { unsafeBitCast($0, to: Function.self) }
    }
}
