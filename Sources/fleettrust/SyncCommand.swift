import ArgumentParser
import Foundation
import FleetTrustCore
import FleetTrustDashboard

/// `fleettrust sync`: brings known_hosts up to date with the inventory, the job of Ansible's
/// `known_hosts` module, but only with keys the hosts proved they hold and the judgement offers
/// for saving. Never touches a changed, revoked, pin-mismatch or invalid-certificate host.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Add the proved keys of new inventory hosts to known_hosts; never touch changed or revoked ones.",
        discussion: """
            Every host is probed and judged as scan judges it. A new host's usable keys are added \
            to its known_hosts file (the first user file; hashed as --hash-known-hosts says) when \
            a pin or a pinned CA proves them, or with --trust-on-first-use. Each write is locked, \
            atomic and compare-and-set, and appended to the audit log (action sync). A second run \
            changes nothing and says so. Exit status: 0 every host trusted (or added); 1 some host \
            left out (no pin, unreachable, a write refused, an inventory entry skipped); 2 any \
            host changed, revoked, pin-mismatch or presenting an invalid certificate (never \
            touched); 64 bad usage or unreadable input.
            """)

    @OptionGroup var fleet: FleetOptions

    @Flag(name: .customLong("trust-on-first-use"),
          help: "Also add new hosts no pin proves (their keys were proved by a key exchange, but nothing says they are the right ones).")
    var trustOnFirstUse = false

    @Flag(help: "Print the lines that would be added, as a diff, and write nothing.")
    var check = false

    @Flag(name: .customLong("create"), help: "Create a --known-hosts file that does not exist yet (without it, a missing file is taken for a typo and refused).")
    var create = false

    @Option(name: .customLong("audit-log"), help: ArgumentHelp("Where each write is appended as a JSON line (default: the dashboard's).",
                                                               valueName: "file"))
    var auditLog: String?

    func validate() throws {
        try fleet.validateShared()
        if fleet.inventories.isEmpty { throw ValidationError("give an inventory with --inventory FILE") }
    }

    func run() async throws {
        // A write command given a file that does not exist was most likely given a typo: adding every
        // host to a new file would make each look trusted to a later scan of that file.
        if !create, let missing = fleet.knownHostsFiles.map(expandTilde).first(where: { !FileManager.default.fileExists(atPath: $0) }) {
            printError("\(Sanitizer.clean(missing)): no such known_hosts file; sync writes only to files that exist (add --create to create it)")
            throw ExitCode(64)
        }
        do {
            let inventory = try fleet.loadInventory()
            let skipped = SkippedInventoryEntry.entries(in: inventory)
            let results = await fleet.probe(inventory.hosts)
            let judged = try fleet.judge(inventory.hosts, results)
            let plan = SyncPlan(judged, trustOnFirstUse: trustOnFirstUse)
            for entry in plan.entries { report(entry) }
            let hashed = await hashesByDefault(plan)
            let written = check ? printDiff(plan, hashed: hashed) : write(plan, hashed: hashed)
            let status = ScanDocument.exitStatus(plan.exitStatus(failedWrites: written.failed), skipped: skipped)
            summarize(plan, added: written.added, keys: written.keys, failed: written.failed, skipped: skipped.count)
            if status != 0 { throw ExitCode(status) }
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        }
    }

    /// One line on standard error for each host left alone, saying why.
    private func report(_ entry: SyncPlan.Entry) {
        let judged = entry.judged
        let host = "\(judged.labels.name) (\(judged.labels.endpoint))"
        switch entry.action {
        case .add: break
        case .alreadyTrusted:
            if let standard = judged.standardStatus, standard != .trusted {
                printError("\(host): trusted by its \(judged.policy) policy, which does not consult known_hosts; "
                           + "ssh itself would say \(standard.rawValue); not written")
            }
        case .refused:
            printError("\(host): not touched: \(judged.status.rawValue): \(JudgementWords.reason(judged))")
        case .notAdded(let why):
            printError("\(host): not added: \(why)")
        }
    }

    /// The hashing default, asked of `ssh -G` only when some host to add does not set it itself.
    private func hashesByDefault(_ plan: SyncPlan) async -> Bool {
        let asksSSH = plan.entries.contains { entry in
            if case .add = entry.action { return entry.judged.host.sshOptions.hashKnownHosts == nil }
            return false
        }
        return asksSSH ? await fleet.hashesKnownHosts() : false
    }

    private typealias Outcome = (added: Int, keys: Int, failed: Int)

    /// `--check`: the lines each file would gain, as a diff on standard output.
    private func printDiff(_ plan: SyncPlan, hashed: Bool) -> Outcome {
        var byFile: [(file: String, lines: [String])] = []
        var outcome: Outcome = (0, 0, 0)
        for entry in plan.entries {
            guard case .add(let keys, _, _) = entry.action else { continue }
            let judged = entry.judged
            do {
                let lines = try keys.flatMap {
                    try KnownHostsLines.render($0, names: judged.saveNames, hashed: judged.host.sshOptions.hashKnownHosts ?? hashed)
                }
                if let index = byFile.firstIndex(where: { $0.file == judged.saveFile }) {
                    byFile[index].lines += lines
                } else {
                    byFile.append((judged.saveFile, lines))
                }
                outcome.added += 1
                outcome.keys += keys.count
            } catch {
                printError("\(judged.labels.name): \(error)")
                outcome.failed += 1
            }
        }
        for (file, lines) in byFile {
            let name = CleanText(file, limit: 1024).value
            print("--- \(name)\n+++ \(name)")
            for line in lines { print("+" + line) }
        }
        return outcome
    }

    /// Writes each host's keys through the guarded compare-and-set writer, one host at a time,
    /// and appends each outcome to the audit log.
    private func write(_ plan: SyncPlan, hashed: Bool) -> Outcome {
        let environment = ProcessInfo.processInfo.environment
        let log = AuditLog(path: auditLog.map { URL(fileURLWithPath: expandTilde($0)).path } ?? AuditLog.defaultPath(environment: environment))
        let user = AuditLog.currentUser(environment: environment)
        var outcome: Outcome = (0, 0, 0)
        // Hosts that share one entry (two inventory names for one address) are written once.
        var writtenEntries: [[String]: (host: String, keys: Set<String>)] = [:]
        for entry in plan.entries {
            guard case .add(let keys, let recorded, let proof) = entry.action else { continue }
            let judged = entry.judged
            let fingerprints = Set(keys.map(\.sha256Fingerprint))
            let place = [judged.saveFile] + judged.saveNames
            if let earlier = writtenEntries[place], earlier.keys == fingerprints {
                print("added \(judged.labels.name) (\(judged.labels.endpoint)): same entry as \(earlier.host)")
                outcome.added += 1
                continue
            }
            var outcomeText = "saved"
            do {
                try KnownHostsWriter(path: judged.saveFile, hashNames: judged.host.sshOptions.hashKnownHosts ?? hashed)
                    .update(names: judged.saveNames, removing: [], adding: keys, expecting: recorded)
                writtenEntries[place] = (judged.labels.name.value, fingerprints)
                outcome.added += 1
                outcome.keys += keys.count
                print("added \(judged.labels.name) (\(judged.labels.endpoint)): \(keys.count) key\(keys.count == 1 ? "" : "s") "
                      + "under \(CleanText(judged.saveNames.joined(separator: ","), limit: 300)) to "
                      + "\(CleanText(judged.saveFile, limit: 1024)) (proved by \(proof.rawValue))")
            } catch {
                outcomeText = "not saved: \(error)"
                outcome.failed += 1
                printError("\(judged.labels.name) (\(judged.labels.endpoint)): not added: \(error)")
            }
            let item = DecisionItem(index: 0, host: judged.host, names: judged.saveNames, keys: keys, previous: [],
                                    file: judged.saveFile, seen: judged.recorded, shownPins: judged.pin.pinnedText)
            let records = AuditLog.records(for: Decision(kind: .trust, items: [item]), user: user, time: Date(), outcome: outcomeText)
                .map { record -> AuditLog.Record in
                    var record = record
                    record.action = "sync"
                    record.method = "sync (\(proof.rawValue)) -> \(judged.saveFile)"
                    return record
                }
            do {
                try log.append(records)
            } catch {
                printError("\(error)")
                outcome.failed += 1
            }
        }
        return outcome
    }

    /// The last line: what changed (or would change), what was left alone.
    private func summarize(_ plan: SyncPlan, added: Int, keys: Int, failed: Int, skipped: Int) {
        var counts: [String: Int] = [:]
        for entry in plan.entries {
            switch entry.action {
            case .add: continue
            case .alreadyTrusted: counts["already trusted", default: 0] += 1
            case .refused: counts["refused (never touched)", default: 0] += 1
            case .notAdded: counts["not added", default: 0] += 1
            }
        }
        var parts = ["already trusted", "refused (never touched)", "not added"].compactMap { word in
            counts[word].map { "\($0) \(word)" }
        }
        if failed > 0 { parts.append("\(failed) write\(failed == 1 ? "" : "s") failed") }
        if skipped > 0 { parts.append("\(skipped) inventory entr\(skipped == 1 ? "y" : "ies") skipped") }
        let hosts = "\(added) host\(added == 1 ? "" : "s") (\(keys) key\(keys == 1 ? "" : "s"))"
        let rest = parts.isEmpty ? "" : "; " + parts.joined(separator: ", ")
        if check {
            printError("sync --check: " + (added == 0 ? "nothing would change" : "would add \(hosts)") + rest)
        } else {
            print("sync: " + (added == 0 ? "nothing changed" : "added \(hosts)") + rest)
        }
    }
}
