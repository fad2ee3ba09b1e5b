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
    /// The lookup string `ssh` used (`host`, `[host]:port`, or the alias).
    public var lookupString: String
    public var evidence: [TrustEvidence]
    /// Set when the answer came from the bare-name retry for a non-22 port.
    public var viaBareNameRetry: Bool
    /// Set when a certificate was presented but judged as its plain key.
    public var judgedAsPlainKey: Bool
    /// Why a presented certificate was not accepted through its CA, if it was not.
    public var certificateProblem: String?
    /// Set when the answer came from an additional lookup name (an extension).
    public var viaAdditionalName: String?

    public var isTrusted: Bool { verdict == .trusted || verdict == .trustedByCA }

    /// One sentence for people.
    public var summary: String {
        var text: String
        switch verdict {
        case .trusted: text = "trusted: the key is recorded for \(Sanitizer.clean(lookupString))"
        case .trustedByCA: text = "trusted by CA: a @cert-authority line for \(Sanitizer.clean(lookupString)) signed the certificate"
        case .new: text = "new: no key is recorded for \(Sanitizer.clean(lookupString))"
        case .changed: text = "changed: \(Sanitizer.clean(lookupString)) is recorded with another key"
        case .revoked: text = "revoked: the key is revoked for \(Sanitizer.clean(lookupString))"
        case .ipMismatch: text = "ip-mismatch: the address is recorded with another key"
        }
        if viaBareNameRetry { text += " (found under the name without port)" }
        if let name = viaAdditionalName { text += " (through additional name \(Sanitizer.clean(name)))" }
        if let problem = certificateProblem { text += "; certificate not accepted: \(problem)" }
        return text
    }
}

/// Errors for keys that OpenSSH would refuse before looking at known_hosts.
public enum TrustError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidCertificate(String)

    public var description: String {
        switch self {
        case .invalidCertificate(let why): return "the presented certificate is invalid: \(why)"
        }
    }
}
