import Foundation

/// The words for a `JudgedHost`'s facts, shared by every renderer (scan table and JSON, the
/// dashboard, verify, the audit log) so that one fact always reads the same way.
public enum JudgementWords {
    /// How a host is reached, short, for lists and tables: `via bastion,inner`, `via ProxyCommand`;
    /// nil for a direct host.
    public static func routeMark(_ route: HostRoute) -> String? {
        guard let first = route.hops.first else { return nil }
        if case .command = first { return "via ProxyCommand" }
        return "via " + CleanText(route.jumpHosts.map(\.description).joined(separator: ","), limit: 80).value
    }

    /// Every hop in order, then the host, for the detail view: `bastion -> inner -> 10.0.0.5:22`.
    public static func routePath(_ judged: JudgedHost) -> String {
        let hops = judged.route.hops.map { CleanText($0.description, limit: 160).value }
        return (hops + [judged.labels.endpoint.value]).joined(separator: " -> ")
    }

    /// One sentence saying why the host has its status.
    public static func reason(_ judged: JudgedHost) -> String {
        func key(_ index: Int) -> String {
            let key = judged.keys[index]
            let fingerprint = key.key?.sha256Fingerprint ?? "(undecodable)"
            return "\(key.key?.kind.label ?? key.typeName) \(fingerprint)"
        }
        let name = judged.lookup.hostString
        switch judged.reason {
        case .notProbed: return "not probed yet"
        case .probeFailed: return judged.failure.map { "\($0.stage.rawValue) failed: \($0.message)" } ?? "no keys"
        case .keyRevoked(let index):
            if let list = judged.keys[index].judgement?.evidence.first(where: { $0.role == .revokedHostKeys }) {
                return "the key \(key(index)) is revoked by RevokedHostKeys \(CleanText(list.path, limit: 300))" + (list.line > 0 ? ":\(list.line)" : "")
            }
            return "the key \(key(index)) is revoked by @revoked" + place(judged.keys[index], .revocation)
        case .keyChanged(let index):
            let via = judged.keys[index].verdict == .invalidCertificate ? " (certified by an invalid certificate)" : ""
            return "\(CleanText(name)) is recorded with another key than \(key(index))\(via)" + place(judged.keys[index], .differentKey)
        case .addressRecordsOtherKey(let index): return "the address is recorded with another key than \(key(index)) (CheckHostIP)"
        case .pinMismatch:
            if judged.tls != nil { return "no certificate of the chain has a public key the pins for this endpoint name" }
            if judged.pin.contradictsMetKey, let met = judged.negotiated {
                return "ssh meets \(key(met)), which no pin names, while the pinned key of its type was shown only to "
                    + "the probe's other connections: each key type comes over its own connection, and those may have reached another machine"
            }
            let unnamed = judged.keys.indices.filter { judged.keys[$0].key != nil && judged.keys[$0].pin != .matched }
            guard judged.keys.contains(where: { $0.pin == .matched }), !unnamed.isEmpty else {
                return "no presented key matches the pins for this host"
            }
            return "the pins name no " + unnamed.map(key).joined(separator: ", ")
                + ", while a pinned fingerprint matches no presented key: each key type comes over its own connection, "
                + "and the unnamed keys may come from another machine"
        case .invalidCertificate(let index):
            let problem = judged.keys[index].certificateProblem.map(certificateProblem) ?? "invalid"
            return "the server presents an invalid certificate: \(problem)"
        case .noMatchingHostKeyType, .badHostKeyAlgorithms, .negotiatedKeyNotProbed, .negotiatedKeyUnusable:
            return judged.failure.map { "\($0.message)" } ?? "ssh could use none of the keys"
        case .nothingRecorded(let index): return "nothing recorded for \(CleanText(name)) accepts \(key(index))"
        case .trusted(let index):
            return "ssh meets \(key(index)), trusted by " + judged.trustedBy.map(basis).joined(separator: " and ")
        case .notPinned: return "the \(judged.policy) policy requires a pin, and no pin in force applies to this host"
        case .pinMatched: return "a pinned key was presented (policy \(judged.policy): known_hosts is not consulted)"
        case .certificateFromPinnedCA(let index): return "\(key(index)) is a valid host certificate from a CA pinned for this host"
        case .noCertificateFromPinnedCA: return "no valid host certificate from a CA pinned for this host was presented"
        case .unchecked: return "UNSAFE: the policy is off, nothing was checked"
        case .settingNotJudged(let setting):
            return "not judged: \(CleanText(setting.description, limit: 400)) (ssh's answer under this setting is not reproduced)"
        case .chainTrusted, .chainUntrusted, .certificateOutOfValidity, .nameMismatch:
            return judged.tls.map(tlsReason) ?? "no TLS handshake"
        case .splitView: return splitView(judged)
        case .keyNotProved(let line):
            let what = judged.failure.map { "\($0.stage.rawValue) \($0.code.rawValue): \($0.message)" } ?? "no key proved"
            return "ssh compares this host with the keys recorded at \(CleanText(line.description, limit: 300)), "
                + "and the key ssh would meet was not proved (\(what))"
        }
    }

    /// ` at FILE:LINE` of the first evidence line with `role`, or nothing.
    private static func place(_ key: JudgedKey, _ role: TrustEvidence.Role) -> String {
        guard let evidence = key.judgement?.evidence.first(where: { $0.role == role }) else { return "" }
        return " at \(CleanText(evidence.path, limit: 300)):\(evidence.line)"
    }

    /// Short words for how trust was established.
    public static func basis(_ basis: TrustBasis) -> String {
        switch basis {
        case .knownHosts: return "known_hosts"
        case .certificateAuthority: return "a @cert-authority line"
        case .bareName: return "the name without port"
        case .additionalName: return "an additional name"
        case .pin: return "a pin"
        case .caPin: return "a pinned CA"
        case .certificateChain: return "its certificate chain"
        case .localhostExemption: return "NoHostAuthenticationForLocalhost (a loopback peer: known_hosts is not consulted)"
        case .dns: return "a validated SSHFP record in DNS (VerifyHostKeyDNS yes: known_hosts is not consulted)"
        }
    }

    /// The method as a compact code (`known-hosts+pin`), nil when the host is not trusted.
    public static func methodCode(_ judged: JudgedHost) -> String? {
        judged.trustedBy.isEmpty ? nil : judged.trustedBy.map(\.rawValue).joined(separator: "+")
    }

    public static func certificateProblem(_ problem: CertificateProblem) -> String {
        switch problem {
        case .undecodable: return "the certificate cannot be decoded"
        case .badSignature: return "its CA signature does not verify (forged or altered)"
        case .notHostCertificate: return "it is not a host certificate"
        case .expired: return "the certificate has expired"
        case .notYetValid: return "the certificate is not yet valid"
        case .principalMismatch: return "its principals do not name the host"
        case .criticalOptions: return "it carries critical options"
        case .disallowedSignatureAlgorithm: return "its CA signed it with a disallowed algorithm (ssh-rsa, SHA-1)"
        case .unknownCA: return "no @cert-authority line for this host names its CA"
        }
    }

    /// One sentence about one key: its verdict and where it comes from.
    public static func key(_ key: JudgedKey, lookup: LookupName) -> String {
        let name = CleanText(lookup.hostString)
        var text: String
        switch key.verdict {
        case .trusted: text = "trusted: the key is recorded for \(name)"
        case .trustedByCA: text = "trusted by CA: a @cert-authority line for \(name) names the certificate's CA"
        case .new: text = "new: no key is recorded for \(name)"
        case .notRecorded: text = "not recorded: no \(key.key?.kind.plain.label ?? "") key is recorded for \(name); ssh does not meet this key"
        case .changed: text = "changed: \(name) is recorded with another key"
        case .revoked: text = "revoked: a @revoked line names this key" + (key.judgement?.stricterThanSSH == .revokedOnBareName ? " (under the name without port)" : "")
        case .ipMismatch: text = "ip-mismatch: the address is recorded with another key"
        case .invalidCertificate:
            text = "invalid certificate: " + (key.certificateProblem.map(certificateProblem) ?? "invalid")
            if let plain = key.judgement?.plainKeyVerdict { text += "; the key it certifies is \(plain.rawValue)" }
        }
        if key.judgement?.viaBareNameRetry == true, key.verdict.isTrusted { text += " (found under the name without port)" }
        if let name = key.judgement?.viaAdditionalName { text += " (through additional name \(CleanText(name)))" }
        if key.verdict != .invalidCertificate, let problem = key.certificateProblem {
            text += "; certificate not accepted: \(certificateProblem(problem)), judged as its plain key"
        }
        if let unusable = key.unusable { text += "; " + self.unusable(unusable) }
        return text
    }

    /// The key types the probe could not fetch, each with its failure's code
    /// (`not fetched: ecdsa-sha2-nistp256 (bad-signature)`); nil when it fetched every one.
    public static func unfetched(_ judged: JudgedHost) -> String? {
        let missed = judged.unfetched
        guard !missed.isEmpty else { return nil }
        return "not fetched: " + missed.map { "\($0.algorithm) (\($0.failure.code.rawValue))" }.joined(separator: ", ")
    }

    public static func unusable(_ reason: UnusableKey) -> String {
        switch reason {
        case .rsaKeyTooShort: return "ssh refuses RSA keys under 1024 bits"
        }
    }

    public static func stricter(_ choice: StricterChoice) -> String {
        switch choice {
        case .revokedOnBareName: return "a @revoked line for the name without port counts on every port (ssh says only \"unknown\")"
        case .userCertificate: return "a user certificate presented as a host key is invalid (ssh ignores it)"
        case .certificateNotNegotiated: return "an invalid certificate counts even though ssh would meet another key"
        case .keyNotNegotiated: return "a revoked or changed key counts even though ssh would meet another key"
        case .unusableKeyChanged: return "an RSA key under 1024 bits where another RSA key is recorded counts as changed (ssh refuses it before looking)"
        }
    }

    /// What proves a key is the host's, short: `known_hosts`, `@cert-authority`, `pin` (naming it,
    /// or for a certificate its pinned CA), joined by ` + `; `none (only seen)` when nothing does.
    /// A pin on another key proves nothing.
    public static func proof(_ key: JudgedKey) -> String {
        var proofs: [String] = []
        if key.verdict == .trusted { proofs.append("known_hosts") }
        if key.verdict == .trustedByCA { proofs.append("@cert-authority") }
        if key.pin == .matched { proofs.append("pin") }
        return proofs.isEmpty ? "none (only seen)" : proofs.joined(separator: " + ")
    }

    /// Evidence lines for a key (the file lines behind its verdict), and the pin lines.
    public static func evidence(_ key: JudgedKey) -> [String] {
        (key.judgement?.evidence ?? []).map(\.sentence)
    }

    /// One key type's move since the last recorded probe, as a sentence.
    public static func drift(_ move: KeyDrift) -> String {
        let type = CleanText(move.type, limit: 64).value
        switch move.kind {
        case .added: return "\(type) added: \(move.now ?? "")"
        case .removed: return "\(type) removed (was \(move.before ?? "?"))"
        case .changed: return "\(type) changed: \(move.before ?? "?") -> \(move.now ?? "?")"
        case .reverted: return "\(type) REVERTED to a key seen before: \(move.before ?? "?") -> \(move.now ?? "?")"
        case .none, .firstScan: return "\(type) \(move.kind.rawValue)"
        }
    }

    /// The statuses of one alarm level, from the type, for help texts: `changed, revoked or split-view`.
    public static func statuses(atLevel level: Int32) -> String {
        let names = HostStatus.allCases.filter { $0 != .pending && $0.alarmLevel == level }.map(\.rawValue)
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// Seconds since the epoch as an RFC 3339 UTC time; `always`/`forever` for OpenSSH's bounds.
    public static func date(_ seconds: UInt64) -> String {
        if seconds == 0 { return "always" }
        if seconds == UInt64.max { return "forever" }
        return HistoryTime.rfc3339(min(seconds, 253_402_300_799) * 1000)
    }
}
