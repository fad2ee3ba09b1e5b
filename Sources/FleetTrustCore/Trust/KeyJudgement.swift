/// Where and how `ssh` would connect: the inputs to its known_hosts lookup.
public struct ConnectionTarget: Sendable, Hashable {
    /// The host name as given to `ssh` (after `HostName` substitution).
    public var host: String
    public var port: Int
    /// `HostKeyAlias`: looked up verbatim (lowercased), without port and without retry.
    public var hostKeyAlias: String?
    /// The peer's numeric address, when `CheckHostIP` is on (off by default since 8.5).
    public var checkHostIPAddress: String?
    /// Extension beyond OpenSSH (off when empty): other names (an inventory alias, resolved
    /// addresses) consulted only when the primary lookup finds nothing for the key.
    public var additionalLookupNames: [String]

    public init(host: String, port: Int = 22, hostKeyAlias: String? = nil,
                checkHostIPAddress: String? = nil, additionalLookupNames: [String] = []) {
        self.host = host
        self.port = port
        self.hostKeyAlias = hostKeyAlias
        self.checkHostIPAddress = checkHostIPAddress
        self.additionalLookupNames = additionalLookupNames
    }

    public var lookup: LookupName { LookupName(host: host, port: port, hostKeyAlias: hostKeyAlias) }
}

/// OpenSSH's answer for one presented key, with the evidence behind it.
public struct KeyJudgement: Sendable, Hashable {
    public var verdict: KeyVerdict
    public var evidence: [TrustEvidence]
    /// Set when the answer came from the bare-name retry for a non-22 port.
    public var viaBareNameRetry: Bool
    /// Set when a certificate was presented but judged as its plain key.
    public var judgedAsPlainKey: Bool
    /// Why a presented certificate was not accepted through its CA, if it was not.
    public var certificateProblem: CertificateProblem?
    /// Set when the answer came from an additional lookup name (an extension).
    public var viaAdditionalName: String?
    /// For an invalid certificate (verdict `invalid-certificate`): the answer for the key it
    /// certifies, which the server did prove it holds.
    public var plainKeyVerdict: KeyVerdict?
    /// Set where this answer is deliberately stricter than `ssh`'s (documented in the README).
    public var stricterThanSSH: StricterChoice?

    /// `ssh` checks `RevokedHostKeys` before known_hosts and stops there: the key is revoked, and
    /// the file is the evidence. For an invalid certificate it is the key it certifies that is.
    public mutating func revoke(by revocation: RevocationList.Revocation) {
        if verdict == .invalidCertificate { plainKeyVerdict = .revoked } else { verdict = .revoked }
        let line: Int
        if case .listedKey(let number) = revocation.match { line = number } else { line = 0 }
        evidence = [TrustEvidence(role: .revokedHostKeys, path: revocation.path, line: line, keyType: revocation.revokedKey.type,
                                  fingerprint: revocation.revokedKey.sha256Fingerprint, hashed: false)]
    }
}

/// The places where fleettrust's answer is deliberately stricter than `ssh`'s.
public enum StricterChoice: String, Sendable, Codable, CaseIterable {
    /// A `@revoked` line for the bare name revokes the key on every port: `ssh` only reports
    /// "unknown" there, and would accept the key once it is saved under `[host]:port`.
    case revokedOnBareName = "revoked-on-bare-name"
    /// A user certificate presented as a host key is invalid (`ssh` ignores it and judges the key).
    case userCertificate = "user-certificate"
    /// An invalid certificate the server offers is an alarm even when `ssh` would not negotiate it.
    case certificateNotNegotiated = "certificate-not-negotiated"
    /// A revoked or changed key the server holds is an alarm even when `ssh` would not meet it.
    case keyNotNegotiated = "key-not-negotiated"
    /// An RSA key under 1024 bits where known_hosts records another RSA key is `changed`; `ssh`
    /// refuses the short key ("Invalid key length") before it looks at known_hosts.
    case unusableKeyChanged = "unusable-key-changed"
}
