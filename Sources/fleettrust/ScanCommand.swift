import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustSSH

/// `fleettrust scan`: the dashboard's engine without the screen, for cron, CI and monitoring.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Discover every inventory host's keys and judge them against known_hosts and pins.",
        discussion: """
            Exit status: 0 all hosts trusted; 1 some host new, unreachable or failed; \
            2 any host changed, revoked or pin-mismatch; 64 bad usage or unreadable input. \
            With --replay, the keys recorded in an earlier `scan --format json` are judged \
            again against today's files, without touching the network.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json
        case knownHosts = "known-hosts"
    }

    @OptionGroup var fleet: FleetOptions

    @Option(help: "table: a summary for people; json: one document for programs; known-hosts: lines for new hosts, ready to append.")
    var format: Format = .table

    @Option(help: ArgumentHelp("Judge the keys recorded in this earlier `scan --format json` output instead of probing.",
                               valueName: "file"))
    var replay: String?

    func validate() throws {
        try fleet.validateShared()
        if replay != nil && !fleet.inventories.isEmpty {
            throw ValidationError("--replay judges a recorded scan; it takes no --inventory")
        }
        if replay == nil && fleet.inventories.isEmpty { throw ValidationError("give an inventory with --inventory FILE") }
    }

    func run() async throws {
        do {
            let (hosts, results) = try await gather()
            let judge = try makeJudge().preparing(for: hosts)
            let shared = sharedKeyNames(hosts: hosts, results: results)
            let rows = hosts.indices.map { judge.report(hosts[$0], results[$0], sharesKeysWith: shared[$0] ?? []) }
            let report = ScanReport(knownHostsFiles: fleet.effectiveKnownHostsFiles, pinFiles: fleet.pinFiles, hosts: rows)
            try emit(report)
            if report.summary.exitStatus != 0 { throw ExitCode(report.summary.exitStatus) }
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        }
    }

    private func makeJudge() throws -> FleetJudge {
        let knownHosts: KnownHosts
        do {
            knownHosts = try KnownHosts.read(paths: fleet.effectiveKnownHostsFiles)
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
        return FleetJudge(knownHosts: knownHosts, pins: try fleet.loadPins(),
                          pinMode: PinMode(rawValue: fleet.pinsMode) ?? .enforce, useAdditionalNames: fleet.additionalNames)
    }

    private func gather() async throws -> ([InventoryHost], [ProbeResult]) {
        if let replay {
            guard let data = FileManager.default.contents(atPath: replay) else {
                throw CommandFailure.unreadableInput("\(replay): cannot read the recorded scan")
            }
            do {
                let pairs = try ScanReplay.load(data, source: replay)
                return (pairs.map(\.host), pairs.map(\.result))
            } catch let problem as ScanReplay.Problem {
                throw CommandFailure.unreadableInput(problem.description)
            }
        }
        let hosts = try fleet.loadInventory().hosts
        let pool = ProbePool(settings: .init(concurrency: fleet.concurrency, timeout: .milliseconds(Int(fleet.timeout * 1000))))
        var results = [ProbeResult?](repeating: nil, count: hosts.count)
        let progress = standardErrorIsTerminal
        var done = 0
        for await event in pool.probe(hosts) {
            results[event.index] = event.result
            done += 1
            if progress { FileHandle.standardError.write(Data("\rfleettrust: scanned \(done)/\(hosts.count)".utf8)) }
        }
        if progress { FileHandle.standardError.write(Data("\r\u{1b}[K".utf8)) }
        return (hosts, hosts.indices.map { index in
            results[index] ?? ProbeResult(host: hosts[index].address, port: hosts[index].port,
                                          failures: [ProbeFailure(stage: .cancelled, code: "cancelled", message: "the scan was stopped")])
        })
    }

    private func sharedKeyNames(hosts: [InventoryHost], results: [ProbeResult]) -> [Int: [String]] {
        var names: [Int: [String]] = [:]
        for group in SharedKeys.groups(in: results) {
            for index in group.hosts {
                let others = group.hosts.filter { $0 != index }.map { hosts[$0].name }
                names[index, default: []].append(contentsOf: others.filter { !(names[index] ?? []).contains($0) })
            }
        }
        return names
    }

    private func emit(_ report: ScanReport) throws {
        switch format {
        case .json:
            FileHandle.standardOutput.write(try report.encoded() + Data("\n".utf8))
        case .knownHosts:
            for host in report.hosts where host.status == .new {
                for key in host.keys where !key.type.hasSuffix("-cert-v01@openssh.com") {
                    print("\(host.knownHostsName) \(key.key)")
                }
            }
        case .table:
            print(ScanTable.render(report))
        }
    }
}

extension FleetOptions {
    /// Reads the pin files into one set; nil when none is given.
    func loadPins() throws -> PinSet? {
        guard !pinFiles.isEmpty else { return nil }
        do {
            let sets = try pinFiles.map { try PinSet.read(path: expandTilde($0)) }
            return sets.count == 1 ? sets[0] : PinSet(path: sets.map(\.path).joined(separator: ","), lines: sets.flatMap(\.lines))
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
    }
}
