import FleetTrustCore

/// The detail view's TLS section, rendered from `JudgedHost.tls`: the session, the chain leaf
/// first (subject, issuer, SANs, validity, SPKI pin, fingerprint), which CA or pin vouched,
/// days left and warnings.
enum TLSDetailLines {
    static func lines(_ judged: JudgedHost, width: Int) -> [ScreenLine] {
        guard let tls = judged.tls else { return [] }
        var lines: [ScreenLine] = []
        let session = tls.handshake
        lines.append(ScreenLine(" TLS \(session.version)  \(session.cipher)  SNI \(session.serverName.map { CleanText($0).value } ?? "(none)")"
                                + (session.ocspStapled ? "  OCSP stapled" : ""), .dim))
        lines += JudgementWords.tlsEvidence(judged).flatMap { DetailView.wrapped(" " + $0, width: width, role: .dim) }
        let warnings = tls.warnings.map(\.rawValue).joined(separator: ", ")
        lines.append(ScreenLine(" expires in \(tls.leafExpiresInDays) days (leaf), \(tls.chainExpiresInDays) days (earliest in chain)"
                                + (warnings.isEmpty ? "" : "; warnings: " + warnings), warnings.isEmpty ? .dim : .warning))
        for (index, certificate) in tls.certificates.enumerated() {
            var head = ScreenLine()
            head.append(" \(index + 1). \(index == 0 ? "leaf" : "chain") \(certificate.subject)", .header)
            if certificate.selfSigned { head.append("  (self-signed)", .warning) }
            lines.append(head)
            lines += DetailView.wrapped("    issuer \(certificate.issuer)", width: width, role: .dim)
            if !certificate.subjectAltNames.isEmpty {
                lines += DetailView.wrapped("    SAN " + certificate.subjectAltNames.map(\.text).joined(separator: ", "), width: width, role: .dim)
            }
            lines.append(ScreenLine("    valid \(JudgementWords.date(certificate.notBefore)) to \(JudgementWords.date(certificate.notAfter))"
                                    + "  \(certificate.keyType) \(certificate.keyBits)  \(certificate.signatureAlgorithm)", .dim))
            var pin = ScreenLine()
            pin.append("    ")
            pin.append(certificate.pin, .fingerprint)
            if certificate.sha256 == tls.pinnedCertificate?.sha256 { pin.append("  pinned", .normal) }
            lines.append(pin)
            lines.append(ScreenLine("    sha256 \(certificate.sha256)", .dim))
        }
        return lines
    }
}
