import ArgumentParser
import Foundation
import FleetTrustCore

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
            host \(JudgementWords.statuses(atLevel: 2)) (never touched), or presenting again a key \
            it had replaced (reverted drift, judged against the history as scan judges it, read \
            and never recorded: never added, even with --trust-on-first-use); 64 bad usage or \
            unreadable input. A TLS endpoint is never written: it counts at its own level (0 \
            trusted, 2 in alarm).
            """)

    @OptionGroup var fleet: FleetOptions

    @Flag(name: .customLong("trust-on-first-use"),
          help: "Also add new hosts no pin proves (their keys were proved by a key exchange, but nothing says they are the right ones).")
    var trustOnFirstUse = false

    @Flag(help: "Print the lines that would be added, as a diff, and write nothing.")
    var check = false

    @Flag(name: .customLong("create"), help: "Create a --known-hosts file that does not exist yet (without it, a missing file is taken for a typo and refused).")
    var create = false

    @OptionGroup var audit: AuditLogOptions

    /// Read as scan reads it, for drift; sync records nothing in it.
    @OptionGroup var history: HistoryOptions

    func validate() throws {
        try fleet.validateShared()
        try history.validateHistory()
        if fleet.inventory.files.isEmpty { throw ValidationError("give an inventory with --inventory FILE") }
    }

    func run() async throws {
        // A write command given a file that does not exist was most likely given a typo: adding every
        // host to a new file would make each look trusted to a later scan of that file.
        if !create, let missing = fleet.knownHosts.firstMissing {
            printError("\(Sanitizer.clean(missing)): no such known_hosts file; sync writes only to files that exist (add --create to create it)")
            throw ExitCode(64)
        }
        do {
            let inventory = try fleet.loadInventory()
            let skipped = SkippedInventoryEntry.entries(in: inventory)
            let store = try await history.open(readOnly: true)
            let results = await fleet.probe(inventory.hosts)
            let judged = try fleet.judge(inventory.hosts, results, history: try await history.remembered(store, hosts: inventory.hosts))
            let plan = SyncPlan(judged, trustOnFirstUse: trustOnFirstUse)
            SyncRun.notes(plan).forEach(printError)
            let hashed = SyncRun.needsHashingDefault(plan) ? await fleet.hashKnownHosts.hashes() : false
            let run = check ? SyncRun.diff(plan, hashed: hashed)
                : SyncRun.write(plan, editor: TrustStoreEditor(hashNames: hashed), log: audit.log, user: audit.user)
            run.output.forEach { print($0) }
            run.wouldAdd.forEach(printError)
            run.problems.forEach(printError)
            let summary = run.summary(plan, skipped: skipped.count, check: check)
            // Standard output carries only what was (or would be) written; the summary is a report, on standard error in both.
            printError(summary)
            var status = ExitStatusRule.run(hosts: plan.exitStatus(failedWrites: run.failed), skipped: !skipped.isEmpty)
            // --check answers "would anything change?": a host it would add is a change.
            if check && run.added > 0 { status = max(status, 1) }
            if status != 0 { throw ExitCode(status) }
        } catch let failure as CommandFailure {
            printError(failure.description)
            throw ExitCode(64)
        }
    }
}
