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
            Exit status: 0 all hosts trusted; 1 some host new, unreachable or failed, or an \
            inventory entry skipped for an error; 2 any host changed, revoked, pin-mismatch or \
            presenting an invalid certificate, or a host presenting again a key it had replaced \
            (reverted drift); 64 bad usage or unreadable input. Every probe is recorded in the \
            history (see --history); drift is judged against it. With --replay, the keys recorded in an earlier \
            `scan --format json` are judged again against today's files, without touching the network.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json
        case knownHosts = "known-hosts"
        case prometheus
    }

    @OptionGroup var fleet: FleetOptions

    @OptionGroup var history: HistoryOptions

    @Flag(name: .customLong("read-only"), help: "Record nothing in the history (drift is still judged against it).")
    var readOnly = false

    @Option(help: "table: a summary for people; json: one document for programs; known-hosts: lines for new hosts, ready to append (hashed as --hash-known-hosts says); prometheus: node_exporter textfile metrics.")
    var format: Format = .table

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
        if replay != nil && !fleet.inventories.isEmpty {
            throw ValidationError("--replay judges a recorded scan; it takes no --inventory")
        }
        if replay == nil && fleet.inventories.isEmpty { throw ValidationError("give an inventory with --inventory FILE") }
        if dryRun && format != .table && format != .json { throw ValidationError("--dry-run prints a table or a json plan") }
    }

    func run() async throws {
        do {
            let output = try openOutput()
            if dryRun {
                try planOnly(to: output)
                return
            }
            let started = ContinuousClock.now
            let interruption = ScanInterruption()
            let temporary = output.temporaryPath
            interruption.exitAtOnce { if let temporary { unlink(temporary) } }
            // A replay judges an old probe: no drift against today's history, and nothing recorded.
            let store = replay == nil ? try await history.open(readOnly: readOnly) : nil
            var (hosts, results, skipped) = try await gather(interruption: interruption)
            if replay == nil {
                let scanner = ScannerName.resolve(scannerName)
                for index in results.indices { results[index].scanner = scanner }
            }
            interruption.probesFinished()
            if let signal = interruption.receivedSignal {
                try await stopped(by: signal, hosts: hosts, results: results, store: store, output: output)
            }
            let remembered = replay == nil ? try await history.remembered(store, hosts: hosts) : nil
            let judging = try fleet.judging(hosts, results, history: remembered)
            let recording = store != nil && !readOnly
            let seenAt = HistoryTime.nowMilliseconds()
            var sightings: [HistorySighting] = []
            let hostsStatus: Int32
            var judged: [JudgedHost] = []
            if format == .json {
                // Streamed: each host is judged, written and let go (10,000 hosts in little memory).
                var writer = ScanDocumentWriter(knownHostsFiles: fleet.effectiveKnownHostsFiles, pinFiles: fleet.pinFiles,
                                                sharedKeys: judging.shared, sink: output.write)
                var status: Int32 = 0
                for index in hosts.indices {
                    let host = judging.judged(index)
                    if recording, let sighting = HistorySighting(host, source: .scan, seenAt: seenAt) { sightings.append(sighting) }
                    try writer.append(host)
                    status = max(status, ScanReport.exitStatus(of: host))
                }
                var exitStatus = ScanDocument.exitStatus(status, skipped: skipped)
                if let store, recording, let problem = await Self.record(sightings, in: store) {
                    printError(problem)
                    exitStatus = max(exitStatus, 1)
                }
                try writer.finish(skipped: skipped, exitStatus: exitStatus)
                try output.finish()
                if exitStatus != 0 { throw ExitCode(exitStatus) }
                return
            } else {
                judged = hosts.indices.map(judging.judged)
                if recording { sightings = judged.compactMap { HistorySighting($0, source: .scan, seenAt: seenAt) } }
                hostsStatus = ScanReport.exitStatus(for: judged)
            }
            var exitStatus = ScanDocument.exitStatus(hostsStatus, skipped: skipped)
            if let store, recording, let problem = await Self.record(sightings, in: store) {
                printError(problem)
                exitStatus = max(exitStatus, 1)
            }
            if format != .json {
                // After recording: the prometheus metrics carry the exit status a failed record raises.
                let duration = started.duration(to: .now)
                try await emit(judged, skipped: skipped, exitStatus: exitStatus, to: output,
                               seconds: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
            }
            if exitStatus != 0 { throw ExitCode(exitStatus) }
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
    private func stopped(by signal: Int32, hosts: [InventoryHost], results: [ProbeResult], store: HistoryStore?,
                         output: CommandOutput) async throws -> Never {
        output.abandon()
        let finished = results.filter { !$0.keys.isEmpty }.count
        var line = "interrupted by \(ScanInterruption.name(signal)): \(finished) of \(hosts.count) hosts proved their keys"
        if let store, !readOnly {
            let seenAt = HistoryTime.nowMilliseconds()
            let judging = try fleet.judging(hosts, results)
            let sightings = hosts.indices.compactMap { index -> HistorySighting? in
                results[index].keys.isEmpty ? nil : HistorySighting(judging.judged(index), source: .scan, seenAt: seenAt)
            }
            if let problem = await Self.record(sightings, in: store) {
                line += "; the history could not record them: \(problem)"
            } else {
                line += " and are recorded in the history"
            }
        }
        if let output = self.output { line += "; \(output) was left as it was" } else { line += "; no report was printed" }
        printError(line)
        throw ExitCode(128 + signal)
    }

    /// Records every host that proved keys; returns why it could not, if it could not.
    static func record(_ sightings: [HistorySighting], in store: HistoryStore) async -> String? {
        do {
            try await OffPool.run { try store.record(sightings) }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// `--dry-run`: reads the inventory, known_hosts and pins, and says what would be probed.
    private func planOnly(to output: CommandOutput) throws {
        let inventory = try fleet.loadInventory()
        let hosts = inventory.hosts
        let skipped = SkippedInventoryEntry.entries(in: inventory)
        let judge = try fleet.loadJudge(for: hosts)
        let plan = ScanPlan(hosts: hosts, judge: judge, knownHostsFiles: fleet.effectiveKnownHostsFiles, pinFiles: fleet.pinFiles,
                            skipped: skipped)
        switch format {
        case .json:
            try output.write(try plan.encoded() + Data("\n".utf8))
        case .table, .knownHosts, .prometheus:
            let files = Set(judge.knownHosts.sets.values.flatMap(\.files).map(\.path))
            let probed = plan.summary.probed
            var text = "would probe \(probed) host\(probed == 1 ? "" : "s")"
                + (probed < hosts.count ? " (\(hosts.count - probed) refused)" : "") + "; "
                + "\(plan.summary.knownHostsLines) known_hosts line\(plan.summary.knownHostsLines == 1 ? "" : "s") read from \(files.count) file\(files.count == 1 ? "" : "s")\n"
            text += Self.skippedLines(skipped)
            try output.write(Data(text.utf8))
        }
        try output.finish()
        if plan.summary.exitStatus != 0 { throw ExitCode(plan.summary.exitStatus) }
    }

    private func gather(interruption: ScanInterruption) async throws -> ([InventoryHost], [ProbeResult], [SkippedInventoryEntry]) {
        if let replay {
            fleet.missingKnownHostsWarnings.forEach(printError)
            let data: Data
            do {
                data = Data(try InputFile.read(expandTilde(replay), role: "recorded scan"))
            } catch {
                throw CommandFailure.unreadableInput(error.description)
            }
            do {
                let pairs = try ScanReplay.load(data, source: replay)
                return (pairs.map(\.host), pairs.map(\.result), [])
            } catch let problem as ScanReplay.Problem {
                throw CommandFailure.unreadableInput(problem.description)
            }
        }
        let inventory = try fleet.loadInventory()
        return (inventory.hosts, await fleet.probe(inventory.hosts, interruption: interruption), SkippedInventoryEntry.entries(in: inventory))
    }

    /// Every format but json (which is streamed), from all the judged hosts.
    private func emit(_ judged: [JudgedHost], skipped: [SkippedInventoryEntry], exitStatus: Int32, to output: CommandOutput,
                      seconds: Double) async throws {
        switch format {
        case .json:
            preconditionFailure("scan streams its json report host by host (run())")
        case .knownHosts:
            let saving = judged.compactMap { host -> (JudgedHost, [HostKey])? in
                if case .save(let keys) = host.saving { return (host, keys) }
                return nil
            }
            // `ssh -G` is asked only when some host's own configuration does not say.
            let asksSSH = saving.contains { $0.0.host.sshOptions.hashKnownHosts == nil }
            let hashedByDefault = asksSSH ? await fleet.hashesKnownHosts() : false
            var lines: [String] = []
            for (host, keys) in saving {
                do {
                    for key in keys {
                        lines += try KnownHostsLines.render(key, names: host.saveNames,
                                                            hashed: host.host.sshOptions.hashKnownHosts ?? hashedByDefault)
                    }
                } catch {
                    printError("\(host.labels.name): \(error)")
                }
            }
            try output.write(Data(lines.map { $0 + "\n" }.joined().utf8))
        case .prometheus:
            let metrics = PrometheusTextfile(judged: judged, durationSeconds: seconds, finishedAt: Date(),
                                             skippedEntries: skipped.count, exitStatus: exitStatus)
            try output.write(Data(metrics.rendered().utf8))
        case .table:
            try output.write(Data((ScanTable.render(judged, layout: tableLayout()) + "\n" + Self.skippedLines(skipped)).utf8))
        }
        try output.finish()
    }

    /// The table fits the terminal it is printed on (or `COLUMNS`), in colour there unless
    /// `NO_COLOR`; a file (`--output`), a pipe without `COLUMNS` and `--wide` get full rows, never colour.
    func tableLayout(environment: [String: String] = ProcessInfo.processInfo.environment) -> ScanTable.Layout {
        guard output == nil else { return ScanTable.Layout() }
        let terminal = isatty(1) == 1
        var width = environment["COLUMNS"].flatMap(Int.init).flatMap { (20...10_000).contains($0) ? $0 : nil }
        if width == nil, terminal {
            var size = winsize()
            if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 20 { width = Int(size.ws_col) }
        }
        let color = terminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        return ScanTable.Layout(width: wide ? nil : width, color: color)
    }

    /// The table's list of skipped inventory entries (nothing when none was skipped).
    static func skippedLines(_ skipped: [SkippedInventoryEntry]) -> String {
        guard !skipped.isEmpty else { return "" }
        return "\nSkipped inventory entries (not checked; exit status at least 1):\n"
            + skipped.map { "  \($0)\n" }.joined()
    }

    /// Standard output, or `--output` (its temporary file made now, so a path that cannot be
    /// written is reported before a long scan, not after).
    private func openOutput() throws -> CommandOutput {
        do {
            return try CommandOutput(path: output.map(expandTilde))
        } catch {
            throw CommandFailure.unreadableInput("\(error)")
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
            throw CommandFailure.unreadableInput(String(describing: error))
        }
    }
}

