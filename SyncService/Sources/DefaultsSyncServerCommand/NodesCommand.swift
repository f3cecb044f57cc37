import ArgumentParser
import DefaultsSyncServer
import Foundation
import Logging

/// `defaults-sync-server nodes add|list|drain|down|restore|remove`: the directory of nodes
/// (``NodeDirectory``), in the database of the instances' own URL.
struct Nodes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists and changes the nodes (PostgreSQL clusters) users are assigned to.",
        discussion: """
            The directory is in the database of the instances' own URL (--database-url-file or \
            DEFAULTS_SYNC_DATABASE_URL, as for `serve`); every instance reads it each second and \
            serves every node. A user is assigned at their first token to the available node with \
            the most room (`token --assign-node`, or SELECT defaults_sync_service_assign(user) from \
            a sign-in service), and the token names it.
            """,
        subcommands: [Add.self, List.self, Drain.self, Down.self, Restore.self, Remove.self])

    /// Runs `body` with the directory, closed after.
    static func withDirectory<Result>(
        _ database: DatabaseOptions, _ body: (NodeDirectory) async throws -> Result
    ) async throws -> Result {
        var logger = Logger(label: "defaults-sync-server")
        logger.logLevel = .warning
        let directory = try await NodeDirectory.connect(databaseURL: try database.url(), logger: logger)
        do {
            let result = try await body(directory)
            await directory.close()
            return result
        } catch let error as NodeDirectoryError {
            await directory.close()
            throw ValidationError(error.description)
        } catch {
            await directory.close()
            throw error
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Adds an available node.",
            discussion: """
                --url is where every instance finds the node's database: env:NAME (an environment \
                variable of each instance), file:/path (a file on each instance's machine, mode \
                600), or postgres://user@host/database without a password (the directory holds none). \
                A list of servers (h1,h2,h3 with target_session_attrs=read-write) is followed as for \
                --database-url.
                """)

        @Argument(help: "The node's name, as tokens name it: letters, digits, '.', '_', '-'.") var name: String
        @Option(help: "env:NAME, file:/path, or postgres://user@host/database (no password).") var url: String
        @Option(help: "The most users the node takes.") var capacity: Int
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let reference: StorageNode.Reference
            do {
                reference = try StorageNode.Reference(url)
            } catch {
                throw ValidationError("--url: \(error)")
            }
            try await Nodes.withDirectory(database) { directory in
                try await directory.add(StorageNode(name: name, reference: reference, capacity: capacity))
            }
            print("added node \(name) (\(capacity) users)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the nodes: state, users, capacity, URL.")

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let nodes = try await Nodes.withDirectory(database) { try await $0.nodes() }
            print("NAME\tSTATE\tUSERS\tCAPACITY\tURL")
            for node in nodes {
                // Read back as strictly as `add` writes: a name and a reference hold no control
                // character (`StorageNode.Reference`), so they print as they are.
                print("\(node.name)\t\(node.state.rawValue)\t\(node.users)\t\(node.capacity)\t\(node.reference)")
            }
        }
    }

    struct Drain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Moves every user off a node, one at a time; it takes no new user.",
            discussion: """
                Each user is assigned the available node with the most room; every instance closes \
                their devices on the drained node within a second or two, as moved: their token \
                provider fetches a new token, which names the new node, and they send what they hold \
                there. Ends when the node holds no user; then remove it.
                """)

        @Argument(help: "The node to drain.") var name: String
        @Option(help: "Milliseconds between two users' moves (default 100).") var paceMilliseconds = 100
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard paceMilliseconds >= 0, paceMilliseconds <= 60_000 else {
                throw ValidationError("--pace-milliseconds: 0 to 60000")
            }
            let count = try await Nodes.withDirectory(database) { directory in
                // A count, not the users: their names are theirs, and this may be a shared terminal.
                try await directory.drain(name, pace: .milliseconds(paceMilliseconds)) { count in
                    if count % 100 == 0 { print("moved \(count) user(s)") }
                }
            }
            print("drained \(name): \(count) user(s) moved; remove it with: nodes remove \(name)")
        }
    }

    struct Down: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Marks a lost node down: its devices are closed, its users assigned elsewhere.",
            discussion: """
                Every instance closes the node's devices as moved; each user is assigned another \
                node at their next token, and their devices send what they hold there.
                """)

        @Argument(help: "The lost node.") var name: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await Nodes.withDirectory(database) { try await $0.setState(.down, of: name) }
            print("node \(name) is down")
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Makes a draining or down node available again (its remaining users stay).")

        @Argument(help: "The node.") var name: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await Nodes.withDirectory(database) { try await $0.setState(.available, of: name) }
            print("node \(name) is available")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Removes a node that holds no user (drain it first).",
            discussion: """
                With --force, a node that still holds users is removed too: each is assigned \
                another node at their next token, and their devices send what they hold there; \
                nothing is copied from the removed node.
                """)

        @Argument(help: "The node.") var name: String
        @Flag(help: "Remove it even though users are assigned to it.") var force = false
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let users = try await Nodes.withDirectory(database) { try await $0.remove(name, force: force) }
            print("removed node \(name)" + (users > 0 ? "; \(users) user(s) will be assigned another node" : ""))
        }
    }
}
