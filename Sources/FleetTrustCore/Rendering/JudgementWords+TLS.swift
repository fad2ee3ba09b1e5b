/// The words for a TLS endpoint's facts, shared by the scan table and JSON, the dashboard and
/// the audit log.
extension JudgementWords {
    /// Why a TLS endpoint has its status (for the reasons the chain decides).
    static func tlsReason(_ tls: TLSJudgement) -> String {
        if let invalid = tls.outOfValidity {
            let when = date(invalid.notBefore) + " to " + date(invalid.notAfter)
            return "the certificate \(invalid.subject) is outside its validity (\(when))"
        }
        if !tls.nameMatches { return "the certificate does not name \(CleanText(tls.checkedName)) (SAN \(sanList(tls.leaf)))" }
        if !tls.chain.validates {
            return "the chain leads to no trusted CA (\(tls.anchorsSource)): \(tls.chain.problem?.value ?? "not verified")"
        }
        return "the chain validates to \(tls.chain.anchor?.subject.value ?? "a trusted CA") (\(tls.anchorsSource)) and names \(CleanText(tls.checkedName))"
    }

    /// Evidence sentences for a TLS endpoint: the STARTTLS upgrade, the chain, the name check, the pin.
    public static func tlsEvidence(_ judged: JudgedHost) -> [String] {
        guard let tls = judged.tls else { return [] }
        var lines: [String] = []
        if case .tls(let endpoint) = judged.host.endpoint, let service = endpoint.startTLS {
            lines.append("upgrade: plain \(service.displayName) on port \(judged.host.port), upgraded to TLS with STARTTLS")
        }
        if tls.chain.validates {
            lines.append("chain: validates to \(tls.chain.anchor?.subject.value ?? "?") from \(tls.anchorsSource)")
        } else {
            lines.append("chain: does not validate against \(tls.anchorsSource): \(tls.chain.problem?.value ?? "?")")
        }
        lines.append("name: \(CleanText(tls.checkedName)) " + (tls.nameMatches ? "is named by the leaf" : "is not named by the leaf (SAN \(sanList(tls.leaf)))"))
        if let pinned = tls.pinnedCertificate {
            lines.append("pin: pin-sha256:\(pinned.spkiSHA256) matches \(pinned.subject)")
        }
        lines += judged.pin.evidence.map(\.sentence)
        lines += tls.unreadable.map { "unreadable certificate: \($0)" }
        return lines
    }

    /// `DNS:a, IP:b`, or `none`.
    static func sanList(_ certificate: TLSCertificate?) -> String {
        let names = certificate?.subjectAltNames.map(\.text) ?? []
        return names.isEmpty ? "none" : names.prefix(8).joined(separator: ", ")
    }

    /// An RFC 3339 UTC time for a certificate bound.
    public static func date(_ seconds: Int64) -> String {
        seconds < 0 ? "1970-01-01T00:00:00Z" : date(UInt64(seconds))
    }
}
