import FleetTrustCore
import Foundation

/// Everything known about the selected host, rendered from its judgement: the status and why,
/// every key in full with its verdict, pin answer and evidence, certificates, randomart, the
/// route's failure, the banner.
enum DetailView {
    static func lines(_ state: DashboardState, width: Int) -> [ScreenLine] {
        guard let row = state.selectedRow else { return [] }
        let labels = row.judged?.labels ?? HostLabels(row.host)
        var lines: [ScreenLine] = []
        var title = ScreenLine(fill: .dialogTitle)
        title.append(" \(labels.name)  \(labels.endpoint)", .dialogTitle)
        if let user = labels.user { title.append("  user \(user)", .dialogTitle) }
        lines.append(title)
        var status = ScreenLine()
        status.append(" \(row.status.letter) \(row.status.rawValue) ", StyleRole.status(row.status))
        if row.scanning { status.append("  (scanning…)", .dim) }
        lines.append(status)
        guard let judged = row.judged else { return lines }
        lines += wrapped(" " + JudgementWords.reason(judged), width: width, role: judged.status.alarmLevel == 2 ? .danger : .normal)
        lines += TLSDetailLines.lines(judged, width: width)
        if state.settings.recording != nil, let proof = JudgementWords.provenance(judged.probe) { lines += wrapped(" recorded: " + proof, width: width, role: .warning) }
        lines += JudgementWords.splitViewLines(judged).flatMap { wrapped(" other view: " + $0, width: width, role: .danger) }
        // One line per key first, so every fingerprint is in sight before the details scroll away.
        for key in judged.keys {
            var line = ScreenLine()
            line.append(key.isNegotiated ? "  * " : "    ")
            line.append(DisplayWidth.fit(key.key.map { "\($0.kind.label) \($0.bits)" } ?? key.typeName, to: 17))
            line.append(" " + (key.key?.sha256Fingerprint ?? "undecodable certificate") + " ", .fingerprint)
            line.append(" \(key.verdict.rawValue)", key.isAlarm ? .danger : .normal)
            if key.pin != .unpinned { line.append("  pin \(key.pin.rawValue)", key.pin == .mismatch ? .danger : .dim) }
            lines.append(line)
        }
        lines += driftLines(judged, width: width)
        let plain = judged.keys.compactMap(\.key)
        if !plain.isEmpty { lines += randomart(plain, width: width) }
        var policy = " policy: \(judged.policy)"
        switch judged.policySource {
        case .defaultPolicy: policy += " (default)"
        case .inventory: policy += " (inventory fleettrust_policy)"
        case .file(let location): policy += " (\(CleanText(location.description, limit: 200)))"
        }
        if let standard = judged.standardStatus { policy += "; ssh alone would say \(standard.rawValue)" }
        lines.append(ScreenLine(policy, judged.policy.checksNothing ? .danger : .normal))
        if judged.endpointProtocol == .ssh {
            lines.append(ScreenLine(" known_hosts name: \(CleanText(judged.lookup.hostString))"
                                    + (labels.hostKeyAlias != nil ? " (HostKeyAlias)" : "")))
            if !judged.route.isDirect {
                lines += wrapped(" route: " + JudgementWords.routePath(judged) + " (each bastion checked by ssh, StrictHostKeyChecking=yes)",
                                 width: width)
            }
            lines += wrapped(" known_hosts files: " + judged.knownHostsFiles.map { CleanText($0, limit: 200).value }.joined(separator: ", "),
                             width: width, role: .dim)
        }
        if !labels.groups.isEmpty { lines.append(ScreenLine(" groups: " + labels.groups.map(\.value).joined(separator: ", "), .dim)) }
        lines += JudgementWords.sshfp(judged).flatMap { wrapped(" " + $0, width: width, role: judged.sshfp?.stale.isEmpty == false ? .warning : .dim) }
        if let algorithm = judged.negotiatedAlgorithm { lines.append(ScreenLine(" ssh would negotiate: \(algorithm)", .dim)) }
        if judged.pin.verdict != .unpinned {
            lines.append(ScreenLine(" pins: \(judged.pin.verdict.rawValue)", judged.pin.verdict == .mismatch ? .danger : .normal))
            lines += judged.pin.evidence.map { ScreenLine("   " + $0.sentence, .dim) }
        }
        if let hosts = judged.keySharing.widest {
            lines += wrapped(" same key as: \(hosts - 1) other host\(hosts == 2 ? "" : "s")", width: width, role: .warning)
        }
        for choice in judged.stricterThanSSH {
            lines += wrapped(" stricter than ssh: " + JudgementWords.stricter(choice), width: width, role: .dim)
        }
        if let version = judged.probe.serverVersion { lines.append(ScreenLine(" server: " + CleanText(version, limit: 255).value)) }
        if let banner = judged.probe.banner, !banner.isEmpty {
            lines += CleanText(multiline: banner, lineLimit: 200, maxLines: 10).lines.map { ScreenLine(" banner│ " + $0, .dim) }
        }
        for missed in judged.unfetched {
            lines += wrapped(" not fetched: \(missed.algorithm): \(missed.failure.stage.rawValue) (\(missed.failure.code.rawValue)): \(missed.failure.message)",
                             width: width, role: .warning)
        }
        if let failure = judged.failure {
            lines += wrapped(" failed at \(failure.stage.rawValue) (\(failure.code.rawValue)): \(failure.message)", width: width, role: .danger)
        }
        lines.append(ScreenLine())
        for (n, key) in judged.keys.enumerated() {
            lines += keyLines(key, number: n + 1, lookup: judged.lookup, showMD5: state.showMD5, width: width)
        }
        return lines
    }

    static func keyLines(_ judged: JudgedKey, number: Int, lookup: LookupName, showMD5: Bool, width: Int) -> [ScreenLine] {
        var lines: [ScreenLine] = []
        var head = ScreenLine()
        let label = judged.key.map { "\($0.kind.label) \($0.bits)" } ?? judged.typeName
        head.append(" \(number). \(label)\(judged.isNegotiated ? " (ssh meets this key)" : "")  ", .header)
        head.append(" " + (judged.key?.sha256Fingerprint ?? "undecodable"), .fingerprint)
        lines.append(head)
        if showMD5, let key = judged.key { lines.append(ScreenLine("    " + key.md5Fingerprint, .fingerprint)) }
        let alarm = judged.isAlarm
        lines.append(ScreenLine("    known_hosts: \(judged.verdict.rawValue)   pin: \(judged.pin.rawValue)   proof: \(JudgementWords.proof(judged))",
                                alarm ? .danger : .normal))
        lines += wrapped("    " + JudgementWords.key(judged, lookup: lookup), width: width, role: alarm ? .danger : .dim)
        for recorded in judged.recordedInstead {
            var line = ScreenLine()
            line.append("    recorded instead ", .danger)
            line.append(recorded.fingerprint, .fingerprint)
            line.append(" at \(CleanText(recorded.location.description, limit: 200))", .dim)
            lines.append(line)
        }
        lines += JudgementWords.evidence(judged).map { ScreenLine("    " + $0, .dim) }
        if let certificate = judged.certificate { lines += certificateLines(certificate) }
        if let audit = judged.audit {
            let days = audit.expiresInDays.map { "\($0) days left" } ?? "never expires"
            let warnings = audit.warnings.map(\.rawValue).joined(separator: ", ")
            lines.append(ScreenLine("    certificate: \(days)\(warnings.isEmpty ? "" : "; warnings: " + warnings)",
                                    audit.warnings.isEmpty ? .dim : .warning))
        }
        if let malformed = judged.malformed { lines += wrapped("    undecodable certificate: \(malformed.reason)", width: width, role: .danger) }
        if let algorithms = judged.discovered?.algorithms {
            lines.append(ScreenLine("    host key \(algorithms.hostKey)  kex \(algorithms.keyExchange)  cipher \(algorithms.cipher)  mac \(algorithms.mac)", .dim))
        }
        if let ms = judged.discovered?.handshakeMilliseconds { lines.append(ScreenLine("    handshake \(Int(ms.rounded())) ms", .dim)) }
        if let discovered = judged.discovered {
            lines += WeakKeys.weaknesses(of: discovered).map { ScreenLine("    warning: " + $0.sentence, .warning) }
        }
        return lines
    }

    /// The drift since the last scan, each type's move, and the key timeline: every key the
    /// history remembers, with its first and last sighting.
    static func driftLines(_ judged: JudgedHost, width: Int) -> [ScreenLine] {
        guard let drift = judged.drift else { return [] }
        let role: StyleRole = drift.kind == .reverted ? .danger : drift.kind.isDrift ? .warning : .dim
        var lines = [ScreenLine(" drift since last scan: \(drift.kind.rawValue)", role)]
        for move in drift.moves { lines += wrapped("   " + JudgementWords.drift(move), width: width, role: role) }
        lines.append(ScreenLine(" key timeline:", .dim))
        for seen in drift.timeline {
            var line = ScreenLine()
            line.append("   " + (seen.current ? "now " : "    "))
            line.append(DisplayWidth.fit(CleanText(seen.key.type, limit: 64).value, to: 20) + " ")
            line.append(seen.key.fingerprint, .fingerprint)
            line.append("  \(HistoryTime.rfc3339(seen.firstSeen)) .. \(HistoryTime.rfc3339(seen.lastSeen))  \(seen.sightings)x", .dim)
            lines.append(line)
        }
        return lines
    }

    /// Text broken into lines of at most `width` columns, at spaces where it can be.
    static func wrapped(_ text: String, width: Int, role: StyleRole = .normal, indent: String = "    ") -> [ScreenLine] {
        DisplayWidth.wrap(text, width: max(10, width), indent: indent).map { ScreenLine($0, role) }
    }

    /// Randomart pictures next to each other, as many per row as fit.
    static func randomart(_ keys: [HostKey], width: Int) -> [ScreenLine] {
        let pictures = keys.map { Randomart.draw($0) }
        let pictureWidth = (pictures.first?.first.map(DisplayWidth.of) ?? 19) + 2
        let perRow = max(1, (width - 1) / pictureWidth)
        var lines: [ScreenLine] = []
        var start = 0
        while start < pictures.count {
            let group = pictures[start..<min(pictures.count, start + perRow)]
            let height = group.map(\.count).max() ?? 0
            for r in 0..<height {
                lines.append(ScreenLine(" " + group.map { DisplayWidth.fit(r < $0.count ? $0[r] : "", to: pictureWidth) }.joined()))
            }
            start += perRow
        }
        return lines
    }

    /// What a host certificate claims (whether it is accepted is the judgement's evidence).
    static func certificateLines(_ certificate: HostCertificate) -> [ScreenLine] {
        let principals = certificate.principals.map { CleanText($0, limit: 100).value }.joined(separator: ", ")
        return [
            ScreenLine("    certificate id \"\(CleanText(certificate.keyID, limit: 100))\" serial \(certificate.serial)"
                       + " principals: \(principals.isEmpty ? "(any)" : principals)", .dim),
            ScreenLine("    valid \(JudgementWords.date(certificate.validAfter)) to \(JudgementWords.date(certificate.validBefore)),"
                       + " signed by CA \(certificate.signatureKey.sha256Fingerprint)", .dim),
        ]
    }
}
