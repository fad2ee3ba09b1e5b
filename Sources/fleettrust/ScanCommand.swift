import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustSSH

/// `fleettrust scan`: the dashboard's engine without the screen, for cron, CI and monitoring. The
/// run (judge, record, outcome) and the output formats are in FleetTrustCore (`ScanRun`, `ScanFormat`).
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Discover every inventory host's keys and judge them as ssh would, against known_hosts and pins.",
        discussion: """
            Exit status: 0 all hosts trusted; 1 some host \(JudgementWords.statuses(atLevel: 1)), or an \
            inventory entry skipped for an error; 2 any host \(JudgementWords.statuses(atLevel: 2)), \
            or a host presenting again a key it had replaced (reverted drift); 64 bad usage or \
            unreadable input (a security setting that does not parse refuses the run). Every probe is recorded in the \
            history (see --history); drift is judged against it. With --replay, the keys recorded in an earlier \
            `scan --format json` are judged again against today's files, without touching the network.
            """)

    @OptionGroup var fleet: FleetOptions

    @OptionGroup var history: HistoryOptions

    @Flag(name: .customLong("read-only"), help: "Record nothing in the history (drift is still judged against it).")
    var readOnly = false

    @Option(help: "table: a summary for people; json: one document for programs; known-hosts: lines for new hosts a pin proves (all new hosts with --trust-on-first-use), ready to append (hashed as --hash-known-hosts says); prometheus: node_exporter textfile metrics; sshfp: DNS zone records (ssh-keygen -r) for the keys something vouches for, under the known-hosts gate.")
    var format: ScanFormat = .table

    @Flag(name: .customLong("trust-on-first-use"),
          help: "With --format known-hosts or sshfp: also print new hosts no pin proves, as sync --trust-on-first-use adds them.")
    var trustOnFirstUse = false

    @Option(help: ArgumentHelp("Write the output to this file instead of standard output, atomically (a temporary file renamed over it).",
                               valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Judge the keys recorded in this earlier `scan --format json` output instead of probing.",
                               valueName: "file"))
    var replay: String?

    @Flag(help: "Read the inventory, known_hosts and pins, report what would be probed (table or json), and probe nothing.")
    var dryRun = false

    @Option(name: .customLong("scanner-name"),
            help: ArgumentHelp("The name recorded as each host's scanned_from (default: this machine's host name).", valueName: "name"))
    var scannerName: String?

    @Flag(help: "Table: full rows, however wide (by default the table fits the terminal, or COLUMNS).")
    var wide = false

    func validate() throws {
        try fleet.validateShared()
        try history.validateHistory()
        if replay != nil && !fleet.inventory.files.isEmpty {
            throw ValidationError("--replay judges a recorded scan; it takes no --inventory")
        }
        if replay == nil && fleet.inventory.files.isEmpty { throw ValidationError("give an inventory with --inventory FILE") }
        if dryRun && format != .table && format != .json { throw ValidationError("--dry-run prints a table or a json plan") }
        if trustOnFirstUse && format != .knownHosts && format != .sshfp {
            throw ValidationError("--trust-on-first-use goes with --format known-hosts or sshfp")
        }
    }

    func run() async throws {
        do {
            let output = try CommandOutput(path: self.output.map(expandTilde))
            if dryRun { return try planOnly(to: output) }
            let started = ContinuousClock.now
            let interruption = ScanInterruption()
            let temporary = output.temporaryPath
            interruption.exitAtOnce { if let temporary { unlink(temporary) } }
            // A replay judges an old probe: no drift against today's history, and nothing recorded.
            let store = replay == nil ? try await history.open(readOnly: readOnly) : nil
            let (hosts, results, skipped) = try await gather(interruption: interruption)
            interruption.probesFinished()
            let remembered = replay == nil && interruption.receivedSignal == nil ? try await history.remembered(store, hosts: hosts) : nil
            let judging = try fleet.judging(hosts, results, history: remembered)
            let record = store.flatMap { store in readOnly ? nil : { await Self.record($0, in: store) } }
            let run = ScanRun(count: hosts.count, judged: judging.judged, skipped: skipped, record: record, started: started,
                              facts: ScanRunFacts(knownHostsFiles: fleet.knownHosts.all, pinFiles: fleet.pins.files,
                                                  sharedKeys: judging.shared))
            if let signal = interruption.receivedSignal { try await stopped(by: signal, run, hosts: hosts.count, output: output) }
            var sink = format.sink(ScanFormat.Context(write: output.write,
                                                      tableLayout: .standardOutput(toFile: self.output != nil, wide: wide),
                                                      hashesKnownHostsByDefault: { [fleet] in await fleet.hashKnownHosts.hashes() },
                                                      warn: printError, trustOnFirstUse: trustOnFirstUse))
            let outcome = try await run.run(into: &sink)
            outcome.recordProblem.map(printError)
            try output.finish()
            if outcome.exitStatus != 0 { throw ExitCode(outcome.exitStatus) }
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        } catch let failure as AtomicOutputFile.Failure {
            printError(failure.description)
            throw ExitCode(64)
        }
    }

    /// The end of a scan a signal stopped: the probes that finished are recorded, the output is
    /// dropped (a `--output` file keeps its old content), one line says what happened, and the
    /// exit status is the shell's for the signal.
    private func stopped(by signal: Int32, _ run: ScanRun, hosts: Int, output: CommandOutput) async throws -> Never {
        output.abandon()
        let (proved, problem) = await run.recordProved()
        var line = "interrupted by \(ScanInterruption.name(signal)): \(proved) of \(Counted.of(hosts, "host")) proved their keys"
        if run.record != nil { line += problem.map { "; the history could not record them: \($0)" } ?? " and are recorded in the history" }
        line += self.output.map { path in
            FileManager.default.fileExists(atPath: expandTilde(path)) ? "; \(path) was left as it was" : "; \(path) was not written"
        } ?? "; no report was printed"
        printError(line)
        throw ExitCode(128 + signal)
    }

    /// Records every host that proved keys; returns why it could not, if it could not.
    static func record(_ sightings: [HistorySighting], in store: HistoryStore) async -> String? {
        do { try await OffPool.run { try store.record(sightings) } } catch { return "\(error)" }
        return nil
    }

    /// `--dry-run`: reads the inventory (or the recording), known_hosts and pins, and says what
    /// would be probed (judged, for a replay).
    private func planOnly(to output: CommandOutput) throws {
        let hosts: [InventoryHost], skipped: [SkippedInventoryEntry]
        if let replay {
            (hosts, skipped) = (try replayed(replay).map(\.host), [])
        } else {
            let inventory = try fleet.loadInventory()
            (hosts, skipped) = (inventory.hosts, SkippedInventoryEntry.entries(in: inventory))
        }
        let plan = ScanPlan(hosts: hosts, judge: try fleet.loadJudge(for: hosts),
                            knownHostsFiles: fleet.knownHosts.all, pinFiles: fleet.pins.files, skipped: skipped)
        try output.write(try plan.rendered(as: format) ?? Data())
        try output.finish()
        if plan.summary.exitStatus != 0 { throw ExitCode(plan.summary.exitStatus) }
    }

    /// The hosts and probes of a recorded scan, under this machine's ssh configuration.
    private func replayed(_ replay: String) throws -> [(host: InventoryHost, result: ProbeResult)] {
        do {
            return try ScanReplay.load(path: expandTilde(replay), source: replay, under: try fleet.replayConfiguration())
        } catch let problem as ScanReplay.Problem {
            throw CommandFailure.unreadableInput(problem.description)
        }
    }

    private func gather(interruption: ScanInterruption) async throws -> ([InventoryHost], [ProbeResult], [SkippedInventoryEntry]) {
        if let replay {
            fleet.knownHosts.missingWarnings.forEach(printError)
            let pairs = try replayed(replay)
            return (pairs.map(\.host), pairs.map(\.result), [])
        }
        let inventory = try fleet.loadInventory()
        let scanner = ScannerName.resolve(scannerName)
        let results = await fleet.probe(inventory.hosts, interruption: interruption).map { result in
            var result = result
            result.scanner = scanner
            return result
        }
        return (inventory.hosts, results, SkippedInventoryEntry.entries(in: inventory))
    }
}

extension ScanFormat: ExpressibleByArgument {}
