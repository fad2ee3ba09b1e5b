import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustSSH

/// `fleettrust discover`: the keys each target proves it holds, like `ssh-keyscan` but verified.
struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "Fetch and verify the SSH host keys of the given hosts.",
        discussion: """
            Completes one key exchange per host-key type (the server proves it holds each key). \
            Targets and -f files are read as ssh-keyscan reads them: ADDRLIST [NAMELIST], the \
            addresses tried in order, the keys printed under the names. Failures go to standard \
            error, one line per host. Exit status: 0 every host answered, 1 some host failed or a \
            line of a -f file was left out, 64 bad usage.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text
        case knownHosts = "known-hosts"
    }

    @Argument(help: "Targets: HOST, HOST:PORT, [HOST]:PORT or [IPv6]:PORT; several comma-separated addresses are tried in order.")
    var targets: [String] = []

    @Option(name: [.customShort("f"), .customLong("file")],
            help: ArgumentHelp("Read targets from this file, one per line as ssh-keyscan reads them ('ADDRLIST [NAMELIST]', # comments); '-' reads standard input. Repeatable.",
                               valueName: "file"))
    var files: [String] = []

    @Option(name: [.customShort("t"), .customLong("type")],
            help: ArgumentHelp("Print only these key types, comma-separated, as ssh-keyscan names them: ed25519, ecdsa, rsa.", valueName: "types"),
            transform: { text in
                do { return try KeyTypeSelection(parsing: text) } catch { throw ValidationError("-t: \(error)") }
            })
    var types: KeyTypeSelection?

    @Flag(name: .customShort("H"), help: "Hash the host names, as ssh-keyscan -H does (implies --format known-hosts).")
    var hashNames = false

    @Option(name: .customLong("hash-known-hosts"),
            help: ArgumentHelp("Hash the names of the known-hosts output: yes, no (the default, as ssh-keyscan), or auto (what HashKnownHosts says in your ssh configuration).",
                               valueName: "yes|no|auto"), transform: choice("--hash-known-hosts", "yes, no or auto"))
    var hashKnownHosts: HashChoice = .no

    @Option(name: [.customShort("p"), .customLong("port")], help: "Port for targets that name none.")
    var port: Int = 22

    @Option(help: "Output: text (type, fingerprint, key line) or known-hosts (lines like ssh-keyscan). Default: text, or known-hosts with -H.")
    var format: Format?

    @Option(name: [.customShort("T"), .customLong("timeout")], parsing: .unconditional,
            help: "Seconds allowed for each connection attempt (more than 0, at most 3600; default 5).", transform: parseTimeout)
    var timeout: Double = 5

    @Option(help: "The most hosts probed at once (each server gets at most 8 connections at once).")
    var concurrency: Int = 64

    func validate() throws {
        guard !targets.isEmpty || !files.isEmpty else { throw ValidationError("give at least one target, or a file of them with -f") }
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 1024") }
        guard (1...65535).contains(port) else { throw ValidationError("--port must be between 1 and 65535") }
        if hashNames && format == .text { throw ValidationError("-H hashes known_hosts names; it does not go with --format text") }
        for target in targets {
            do { _ = try KeyscanTarget.parse(Substring(target), defaultPort: port) } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        let (list, unreadable) = try readTargets()
        let selection = types ?? .all
        for kind in selection.unverifiable {
            printError("warning: -t \(kind): fleettrust cannot verify \(kind) host keys here, so it prints none")
        }
        let output = format ?? (hashNames ? .knownHosts : .text)
        let hashed = hashNames ? true : await hashKnownHosts.hashes()
        let pool = ProbePool(settings: .init(concurrency: concurrency, timeout: .milliseconds(Int(timeout * 1000))))
        var run = KeyscanRun(list)
        var failed = false
        await run.run(pool: pool) { event in
            let report = KeyscanRun.report(event, selection: selection, knownHosts: output == .knownHosts, hashed: hashed)
            report.output.forEach { print($0) }
            report.errors.forEach(printError)
            failed = failed || report.failed
        }
        run.sharedKeyWarnings.forEach(printError)
        if failed || unreadable { throw ExitCode(1) }
    }

    /// The command-line targets, then each file's; a bad line of a file is reported and left out.
    private func readTargets() throws -> (targets: [KeyscanTarget], leftOut: Bool) {
        let given = try targets.compactMap { try KeyscanTarget.parse(Substring($0), defaultPort: port) }
        do {
            let read = try KeyscanTarget.read(files: files.map { $0 == "-" ? $0 : expandTilde($0) },
                                              input: { Array(FileHandle.standardInput.readDataToEndOfFile()) }, defaultPort: port)
            read.errors.forEach { printError($0.description) }
            return (given + read.targets, !read.errors.isEmpty)
        } catch {
            printError(error.description)
            throw ExitCode(64)
        }
    }
}
