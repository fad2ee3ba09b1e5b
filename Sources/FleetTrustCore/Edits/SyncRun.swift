import Foundation

/// `sync`'s plan carried out (or, with `--check`, shown as a diff): each host to add is one
/// `TrustEdit` through the `TrustStoreEditor` and one `AuditEvent`, and the words `sync` prints are
/// decided here, so the command only prints them.
public struct SyncRun: Sendable {
    /// Hosts added (or that would be), keys written, writes that failed.
    public var added = 0
    public var keys = 0
    public var failed = 0
    /// For standard output: one line per host added (or the `--check` diff).
    public var output: [String] = []
    /// For standard error: why a host was left alone or a write failed.
    public var problems: [String] = []
    /// For standard error, with `--check`: each host the real run would add, named as it would
    /// name it (the diff's lines may be hashed and name no one).
    public var wouldAdd: [String] = []

    public init() {}

    /// Why each host other than those to add is left alone (one line each, for standard error).
    public static func notes(_ plan: SyncPlan) -> [String] {
        plan.entries.compactMap { entry in
            let judged = entry.judged
            let host = "\(judged.labels.name) (\(judged.labels.endpoint))"
            switch entry.action {
            case .add(_, _, let proof, let withheld):
                return FirstUseKeys.note(withheld, firstUse: proof == .trustOnFirstUse).map { "\(host): \($0)" }
            case .alreadyTrusted:
                guard let standard = judged.standardStatus, standard != .trusted else { return nil }
                return "\(host): trusted by its \(judged.policy) policy, which does not consult known_hosts; "
                    + "ssh itself would say \(standard.rawValue); not written"
            case .refused:
                let reverted = judged.drift.flatMap { drift in
                    drift.kind == .reverted ? "; " + drift.moves.filter { $0.kind == .reverted }.map(JudgementWords.drift).joined(separator: "; ") : nil
                } ?? ""
                return "\(host): not touched: \(judged.status.rawValue): \(JudgementWords.reason(judged))\(reverted)"
            case .notAdded(let why):
                return "\(host): not added: \(why)"
            }
        }
    }

    /// Whether some host to add leaves hashing to the user's configuration (`ssh -G` is asked then).
    public static func needsHashingDefault(_ plan: SyncPlan) -> Bool {
        plan.entries.contains { entry in
            if case .add = entry.action { return entry.judged.host.sshOptions.hashKnownHosts == nil }
            return false
        }
    }

    /// `--check`: the lines each file would gain, as a diff; nothing is written.
    public static func diff(_ plan: SyncPlan, hashed: Bool) -> SyncRun {
        var run = SyncRun()
        var byFile: [(file: String, lines: [String])] = []
        for entry in plan.entries {
            guard case .add(let keys, _, let proof, _) = entry.action else { continue }
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
                run.added += 1
                run.keys += keys.count
                run.wouldAdd.append("would add \(judged.labels.name) (\(judged.labels.endpoint)): \(Counted.of(keys.count, "key")) "
                                    + "under \(CleanText(judged.saveNames.joined(separator: ","), limit: 300)) to "
                                    + "\(CleanText(judged.saveFile, limit: 1024)) (proved by \(proof.rawValue))")
            } catch {
                run.problems.append("\(judged.labels.name): \(error)")
                run.failed += 1
            }
        }
        for (file, lines) in byFile {
            let name = CleanText(file, limit: 1024).value
            run.output += ["--- \(name)", "+++ \(name)"] + lines.map { "+" + $0 }
        }
        return run
    }

    /// Writes each host's keys, one host at a time, and appends each outcome to the audit log.
    /// Hosts that share one entry (two inventory names for one address) are written once.
    public static func write(_ plan: SyncPlan, editor: TrustStoreEditor, log: AuditLog, user: String) -> SyncRun {
        var run = SyncRun()
        let adding = plan.entries.filter { if case .add = $0.action { return true } else { return false } }
        do {
            if !adding.isEmpty { try log.check() }
        } catch {
            run.problems.append("\(error); no known_hosts file was written")
            run.failed += adding.count
            return run
        }
        var written: [[String]: (host: String, keys: Set<String>)] = [:]
        for entry in adding {
            guard case .add(let keys, let recorded, let proof, _) = entry.action else { continue }
            let judged = entry.judged
            let host = "\(judged.labels.name) (\(judged.labels.endpoint))"
            let fingerprints = Set(keys.map(\.sha256Fingerprint))
            let place = [judged.saveFile] + judged.saveNames
            if let earlier = written[place], earlier.keys == fingerprints {
                run.output.append("added \(host): same entry as \(earlier.host)")
                run.added += 1
                continue
            }
            let edit = TrustEdit(path: judged.saveFile, change: .add(names: judged.saveNames, keys: keys, expecting: recorded),
                                 hashNames: judged.host.sshOptions.hashKnownHosts)
            var outcome = AuditEvent.Outcome.written
            do {
                try editor.apply(edit)
                written[place] = (judged.labels.name.value, fingerprints)
                run.added += 1
                run.keys += keys.count
                run.output.append("added \(host): \(Counted.of(keys.count, "key")) "
                                  + "under \(CleanText(judged.saveNames.joined(separator: ","), limit: 300)) to "
                                  + "\(CleanText(judged.saveFile, limit: 1024)) (proved by \(proof.rawValue))")
            } catch {
                outcome = .refused("\(error)")
                run.failed += 1
                run.problems.append("\(host): not added: \(error)")
            }
            let event = AuditEvent(time: Date(), user: user, action: .synced(proof: proof.rawValue, file: judged.saveFile),
                                   host: judged.host, names: judged.saveNames, newFingerprints: keys.map(\.sha256Fingerprint),
                                   outcome: outcome)
            do {
                try log.append([event])
            } catch {
                run.problems.append("\(error)")
                run.failed += 1
            }
        }
        return run
    }

    /// The last line: what changed (or would change, with `check`), what was left alone.
    public func summary(_ plan: SyncPlan, skipped: Int, check: Bool) -> String {
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
        if failed > 0 { parts.append("\(Counted.of(failed, "write")) failed") }
        if skipped > 0 { parts.append("\(Counted.of(skipped, "inventory entry", "inventory entries")) skipped") }
        let hosts = "\(Counted.of(added, "host")) (\(Counted.of(keys, "key")))"
        let rest = parts.isEmpty ? "" : "; " + parts.joined(separator: ", ")
        return check ? "sync --check: " + (added == 0 ? "nothing would change" : "would add \(hosts)") + rest
            : "sync: " + (added == 0 ? "nothing changed" : "added \(hosts)") + rest
    }
}
