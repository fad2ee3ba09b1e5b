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
            Failures go to standard error, one line per host. Exit status: 0 every host answered, \
            1 some host failed, 64 bad usage.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text
        case knownHosts = "known-hosts"
    }

    @Argument(help: "Targets: HOST, HOST:PORT, [HOST]:PORT or [IPv6]:PORT.")
    var targets: [String]

    @Option(help: "Output: text (type, fingerprint, key line) or known-hosts (lines like ssh-keyscan).")
    var format: Format = .text

    @Option(help: "Seconds allowed for each connection attempt.")
    var timeout: Double = 5

    @Option(help: "How many handshakes to run at once.")
    var concurrency: Int = 64

    func validate() throws {
        guard !targets.isEmpty else { throw ValidationError("give at least one target") }
        guard timeout > 0 && timeout <= 3600 else { throw ValidationError("--timeout must be between 0 and 3600 seconds") }
        guard (1...1024).contains(concurrency) else { throw ValidationError("--concurrency must be between 1 and 1024") }
        for target in targets {
            do { _ = try ProbeTarget(parsing: target) } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        let hosts = try targets.map { try ProbeTarget(parsing: $0).inventoryHost }
        let pool = ProbePool(settings: .init(concurrency: concurrency, timeout: .milliseconds(Int(timeout * 1000))))
        var results = [ProbeResult?](repeating: nil, count: hosts.count)
        var failed = false
        for await event in pool.probe(hosts) {
            results[event.index] = event.result
            let host = hosts[event.index]
            if let failure = event.result.failure {
                failed = true
                printError("\(host.endpointLabel): \(failure.stage.rawValue) failed: \(failure.message) (\(failure.code.rawValue))")
                continue
            }
            for discovered in event.result.keys {
                if let line = line(for: discovered, of: host) { print(line) }
                for weakness in WeakKeys.weaknesses(of: discovered) {
                    printError("\(host.endpointLabel): warning: \(discovered.key.type): \(weakness.sentence)")
                }
            }
        }
        let groups = SharedKeys.groups(in: results)
        var reported: Set<[Int]> = []
        for group in groups where reported.insert(group.hosts).inserted {
            let names = group.hosts.map { hosts[$0].endpointLabel }.joined(separator: ", ")
            let keys = groups.filter { $0.hosts == group.hosts }.map(\.key.sha256Fingerprint).joined(separator: ", ")
            printError("warning: \(names) present the same host keys (\(keys))")
        }
        if failed { throw ExitCode(1) }
    }

    /// One output line; certificates have no place in known_hosts (they are trusted through
    /// `@cert-authority` lines naming their CA), so that format leaves them out.
    private func line(for discovered: DiscoveredKey, of host: InventoryHost) -> String? {
        let key = discovered.key
        switch format {
        case .text:
            return "\(host.endpointLabel) \(key.type) \(key.bits) \(key.sha256Fingerprint) \(key.openSSHLine)"
        case .knownHosts:
            guard !key.isCertificate else { return nil }
            let name = LookupName(host: host.address, port: host.port).hostString
            return "\(CleanText(name, limit: 1024)) \(discovered.key.openSSHLine)"
        }
    }
}
