import FleetTrustCore
import Foundation

/// Everything known about the selected host: every key in full, randomart side by side,
/// evidence, algorithms, warnings, banner, failure.
enum DetailView {
    static func lines(_ state: DashboardState, width: Int) -> [ScreenLine] {
        guard let row = state.selectedRow else { return [] }
        let host = row.host
        var lines: [ScreenLine] = []
        var title = ScreenLine(fill: .dialogTitle)
        title.append(" \(Sanitizer.clean(host.name, limit: 200))  \(Sanitizer.clean(host.endpointLabel, limit: 200))", .dialogTitle)
        if let user = host.user { title.append("  user \(Sanitizer.clean(user, limit: 64))", .dialogTitle) }
        lines.append(title)
        var status = ScreenLine()
        status.append(" \(row.status.letter) \(row.status.rawValue) ", StyleRole.status(row.status))
        if let method = row.assessment?.method, !method.isEmpty { status.append("  trusted by \(method)") }
        if row.scanning { status.append("  (scanning…)", .dim) }
        lines.append(status)
        if let assessment = row.assessment {
            if !assessment.knownHostsNames.isEmpty {
                lines.append(ScreenLine(" known_hosts names: " + assessment.knownHostsNames.map { Sanitizer.clean($0) }.joined(separator: ", ")))
            }
            if let reason = assessment.trustBlockedReason { lines.append(ScreenLine(" cannot be trusted here: " + reason, .danger)) }
            lines += assessment.evidence.map { ScreenLine(" evidence: " + Sanitizer.clean($0, limit: 400)) }
        }
        if let result = row.result {
            if let version = result.serverVersion { lines.append(ScreenLine(" server: " + Sanitizer.clean(version, limit: 255))) }
            if let banner = result.banner, !banner.isEmpty {
                let bannerLines = banner.split(separator: "\n", omittingEmptySubsequences: false).prefix(10)
                lines += bannerLines.map { ScreenLine(" banner│ " + Sanitizer.clean(String($0), limit: 200), .dim) }
            }
            if let failure = result.failure {
                lines.append(ScreenLine(" failed at \(failure.stage.rawValue) (\(failure.code)): \(failure.message)", .danger))
            }
        }
        lines.append(ScreenLine())
        let keys = row.assessment?.keys ?? row.result?.keys.map { KeyAssessment(key: $0, knownHosts: .new) } ?? []
        for (n, assessed) in keys.enumerated() {
            lines += keyLines(assessed, number: n + 1, showMD5: state.showMD5)
        }
        if !keys.isEmpty { lines += randomart(keys.map(\.key.key), width: width) }
        return lines
    }

    static func keyLines(_ assessed: KeyAssessment, number: Int, showMD5: Bool) -> [ScreenLine] {
        let key = assessed.key.key
        var lines: [ScreenLine] = []
        var head = ScreenLine()
        head.append(" \(number). \(key.kind.label) \(key.bits)  ", .header)
        head.append(" " + key.sha256Fingerprint, .fingerprint)
        lines.append(head)
        if showMD5 { lines.append(ScreenLine("    " + key.md5Fingerprint, .fingerprint)) }
        let role: StyleRole = assessed.knownHosts == .changed || assessed.knownHosts == .revoked ? .danger : .normal
        lines.append(ScreenLine("    known_hosts: \(assessed.knownHosts.rawValue)   pin: \(assessed.pin.rawValue)", role))
        for recorded in assessed.recorded {
            var line = ScreenLine()
            line.append("    recorded ", .danger)
            line.append(recorded.fingerprint, .fingerprint)
            line.append(" at \(recorded.location)", .dim)
            lines.append(line)
        }
        lines += assessed.evidence.map { ScreenLine("    " + Sanitizer.clean($0, limit: 400), .dim) }
        if key.isCertificate { lines += certificateLines(key) }
        if let algorithms = assessed.key.algorithms {
            lines.append(ScreenLine("    kex \(algorithms.keyExchange)  cipher \(algorithms.cipher)  mac \(algorithms.mac)", .dim))
        }
        if let ms = assessed.key.handshakeMilliseconds { lines.append(ScreenLine("    handshake \(Int(ms.rounded())) ms", .dim)) }
        lines += WeakKeys.weaknesses(of: assessed.key).map { ScreenLine("    warning: " + $0.sentence, .warning) }
        return lines
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

    /// What a host certificate claims (whether it is accepted is the assessor's evidence).
    static func certificateLines(_ key: HostKey) -> [ScreenLine] {
        guard let certificate = try? HostCertificate(key) else {
            return [ScreenLine("    certificate: cannot be parsed", .warning)]
        }
        let principals = certificate.principals.map { Sanitizer.clean($0, limit: 100) }.joined(separator: ", ")
        return [
            ScreenLine("    certificate id \"\(Sanitizer.clean(certificate.keyID, limit: 100))\" serial \(certificate.serial)"
                       + " principals: \(principals.isEmpty ? "(any)" : principals)", .dim),
            ScreenLine("    valid \(date(certificate.validAfter)) to \(date(certificate.validBefore)),"
                       + " signed by CA \(certificate.signatureKey.sha256Fingerprint)", .dim),
        ]
    }

    static func date(_ seconds: UInt64) -> String {
        if seconds == 0 { return "always" }
        if seconds == UInt64.max { return "forever" }
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(min(seconds, 253_402_300_799))))
    }
}
