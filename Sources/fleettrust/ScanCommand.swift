import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustSSH

/// `fleettrust scan`: the dashboard's engine without the screen, for cron, CI and monitoring.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Discover every inventory host's keys and judge them as ssh would, against known_hosts and pins.",
        discussion: """
            Exit status: 0 all hosts trusted; 1 some host new, unreachable or failed; \
            2 any host changed, revoked, pin-mismatch or presenting an invalid certificate; \
            64 bad usage or unreadable input. With --replay, the keys recorded in an earlier \
            `scan --format json` are judged again against today's files, without touching the network.
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

    @Flag(help: "Read the inventory, known_hosts and pins, report what would be probed, and probe nothing.")
    var dryRun = false

    func validate() throws {
        try fleet.validateShared()
        if replay != nil && !fleet.inventories.isEmpty {
            throw ValidationError("--replay judges a recorded scan; it takes no --inventory")
        }
        if replay == nil && fleet.inventories.isEmpty { throw ValidationError("give an inventory with --inventory FILE") }
    }

    func run() async throws {
        do {
            if dryRun {
                let hosts = try fleet.loadInventory().hosts
                let judge = try fleet.loadJudge(for: hosts)
                let files = Set(judge.knownHosts.sets.values.flatMap(\.files).map(\.path))
                let lines = judge.knownHosts.sets.values.flatMap(\.files).reduce(into: [String: Int]()) { $0[$1.path] = $1.lines.count }
                    .values.reduce(0, +)
                print("would probe \(hosts.count) host\(hosts.count == 1 ? "" : "s"); "
                      + "\(lines) known_hosts lines read from \(files.count) file\(files.count == 1 ? "" : "s")")
                return
            }
            let (hosts, results) = try await gather()
            let judge = try fleet.loadJudge(for: hosts).preparing(for: hosts)
            for line in judge.pinLinesApplyingToNone(of: hosts) {
                printError("warning: \(Sanitizer.clean(judge.pins?.path ?? "")):\(line.number): this pin applies to no inventory host")
            }
            let shared = SharedKeys.otherHostNames(names: hosts.map { CleanText($0.name) }, results: results)
            let judged = hosts.indices.map { judge.judge(hosts[$0], results[$0], sharesKeysWith: shared[$0] ?? []) }
            let exitStatus = ScanReport.exitStatus(for: judged.map(\.status))
            try emit(judged)
            if exitStatus != 0 { throw ExitCode(exitStatus) }
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        }
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
                                          failures: [ProbeFailure(stage: .cancelled, code: .cancelled, message: "the scan was stopped")])
        })
    }

    private func emit(_ judged: [JudgedHost]) throws {
        switch format {
        case .json:
            let report = ScanReport(knownHostsFiles: fleet.effectiveKnownHostsFiles, pinFiles: fleet.pinFiles, judged: judged)
            FileHandle.standardOutput.write(try report.encoded() + Data("\n".utf8))
        case .knownHosts:
            for host in judged {
                guard case .save(let keys) = host.saving else { continue }
                let names = host.saveNames.map { CleanText($0, limit: 1024).value }.joined(separator: ",")
                for key in keys { print("\(names) \(key.openSSHLine)") }
            }
        case .table:
            print(ScanTable.render(judged))
        }
    }
}

extension FleetOptions {
    /// Reads the pin file; nil when none is given. A pin file with bad lines is refused: a
    /// skipped pin would leave its host unpinned.
    func loadPins() throws -> PinSet? {
        guard let pinFile else { return nil }
        do {
            return try PinSet.read(path: expandTilde(pinFile))
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
        }
    }
}
