import DefaultsCommandCore
import Foundation

/// Opens the editor's address in the person's browser without putting its secret on a command
/// line, where every local user could read it (`ps`): `xdg-open` is given a file, readable by the
/// owner only, that sends the browser on to the address, as Jupyter does.
struct BrowserOpener: Sendable {
    let address: String
    private let directory: URL

    init(address: String) {
        self.address = address
        let base =
            ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory
        directory = base.appendingPathComponent("defaults-edit-\(getpid())-\(UUID().uuidString)", isDirectory: true)
    }

    /// The file that sends the browser on.
    var file: URL { directory.appendingPathComponent("open.html") }

    /// How long the file that sends the browser on is kept: the browser has read it long before.
    static let fileLifetime = DispatchTimeInterval.seconds(30)

    /// Opens the address, or says how to when it cannot; the server goes on either way.
    func open() {
        do {
            try openThroughFile()
        } catch {
            Output.printError("Could not open a browser (\(error)); open the address above")
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.fileLifetime) { [self] in remove() }
    }

    private func openThroughFile() throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let page = """
            <!DOCTYPE html>
            <meta charset="utf-8">
            <meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0;url=\(address)">
            <title>Opening the settings editor</title>
            <p><a href="\(address)">Open the settings editor</a></p>
            """
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: Data(page.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        // Looked up here, so that a machine without it is told so rather than `env` failing unseen.
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        guard
            let opener = path.split(separator: ":").map({ "\($0)/xdg-open" }).first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "xdg-open is not on the PATH"])
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
