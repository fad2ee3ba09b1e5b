/// The client settings beyond a host's name, port and alias that decide which host key `ssh`
/// accepts, typed as the keyword table (`SSHOption`) parses them; nil means not given, so
/// OpenSSH's default applies.
///
/// One value serves every stage: the inventory readers fill it, the judge decides under it, the
/// JSON report embeds it as it is (its coding keys are the report's), replay decodes it, and
/// `connect` passes it back to `ssh` (`commandLineOptions`), so a host is connected to under
/// exactly the settings it was judged with.
public struct SSHHostOptions: Hashable, Sendable, Codable {
    /// `HostKeyAlgorithms`, with its form (`+`, `-`, `^`, or a list) kept.
    public var hostKeyAlgorithms: SSHAlgorithmList?
    /// `GlobalKnownHostsFile`, `~` expanded; empty for `none`.
    public var globalKnownHostsFiles: [String]?
    /// `UserKnownHostsFile none`: `ssh` reads (and writes) no user file for the host.
    public var noUserKnownHostsFile: Bool?
    /// `CheckHostIP`.
    public var checkHostIP: Bool?
    /// `HashKnownHosts`: whether new entries for this host are written hashed.
    public var hashKnownHosts: Bool?
    /// `CASignatureAlgorithms`: a certificate whose CA signed with another algorithm is not
    /// accepted as a certificate.
    public var caSignatureAlgorithms: SSHAlgorithmList?
    /// `KexAlgorithms`, with its form kept: which servers `ssh` (and the probe) can agree a key
    /// exchange with.
    public var kexAlgorithms: SSHAlgorithmList?
    /// `Ciphers` and `MACs`, with their form kept: what the probe's connection shaped like
    /// `ssh`'s offers (`TransportAlgorithms`).
    public var ciphers: SSHAlgorithmList?
    public var macs: SSHAlgorithmList?
    /// `RequiredRSASize`: an RSA host key with fewer bits is refused.
    public var requiredRSASize: Int?
    /// `RevokedHostKeys`: the file (a KRL or a key list) `ssh` checks before known_hosts, as
    /// `ssh` 9.2 uses it (no `~` or `%` expansion); empty for `none`, nil when unset.
    public var revokedHostKeys: [String]?
    /// `KnownHostsCommand` from the user's own configuration (one from an inventory is
    /// `unjudged` instead): run before judging, its lines judged with the files.
    public var knownHostsCommand: KnownHostsCommand?
    /// `FingerprintHash` (`MD5`, `SHA1`, `SHA256`, `SHA384`, `SHA512`): only the `%f` given to
    /// `KnownHostsCommand`.
    public var fingerprintHash: String?
    /// `NoHostAuthenticationForLocalhost`: `ssh` accepts whatever key a loopback peer it reached
    /// directly presents (no route, no `HostKeyAlias`); only `RevokedHostKeys` still refuses one.
    public var noHostAuthenticationForLocalhost: Bool?
    /// `VerifyHostKeyDNS`: `ssh` reads the host name's SSHFP records; with `yes` a match the
    /// resolver validated (DNSSEC) accepts the key before known_hosts is read.
    public var verifyHostKeyDNS: SSHFPMode?
    /// `AddressFamily`: the probe (and the canonicalizing lookup) uses addresses of that family
    /// only, as `ssh` does, so it meets the server `ssh` meets.
    public var addressFamily: SSHAddressFamily?
    /// Settings in force for the host that change `ssh`'s decision in a way fleettrust does not
    /// reproduce; such a host is judged `unchecked`, naming the first.
    public var unjudged: [UnjudgedSetting]?

    public init(hostKeyAlgorithms: SSHAlgorithmList? = nil, globalKnownHostsFiles: [String]? = nil, checkHostIP: Bool? = nil,
                hashKnownHosts: Bool? = nil, revokedHostKeys: [String]? = nil) {
        self.hostKeyAlgorithms = hostKeyAlgorithms
        self.globalKnownHostsFiles = globalKnownHostsFiles
        self.checkHostIP = checkHostIP
        self.hashKnownHosts = hashKnownHosts
        self.revokedHostKeys = revokedHostKeys
    }

    enum CodingKeys: String, CodingKey {
        case hostKeyAlgorithms = "host_key_algorithms", globalKnownHostsFiles = "global_known_hosts_files"
        case noUserKnownHostsFile = "no_user_known_hosts_file", checkHostIP = "check_host_ip"
        case hashKnownHosts = "hash_known_hosts", caSignatureAlgorithms = "ca_signature_algorithms"
        case requiredRSASize = "required_rsa_size", revokedHostKeys = "revoked_host_keys"
        case knownHostsCommand = "known_hosts_command", fingerprintHash = "fingerprint_hash", unjudged
        case noHostAuthenticationForLocalhost = "no_host_authentication_for_localhost"
        case verifyHostKeyDNS = "verify_host_key_dns"
        case kexAlgorithms = "kex_algorithms"
        case ciphers, macs
        case addressFamily = "address_family"
    }

    /// The report's shape: the fields it has had since version 2 are written even when null; the others
    /// only when set, so a report of hosts without them is unchanged. Paths are cleaned text.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        func paths(_ files: [String]?) -> [String]? { files?.map { CleanText($0, limit: 1024).value } }
        try c.encode(hostKeyAlgorithms, forKey: .hostKeyAlgorithms)
        try c.encode(paths(globalKnownHostsFiles), forKey: .globalKnownHostsFiles)
        try c.encode(checkHostIP, forKey: .checkHostIP)
        try c.encodeIfPresent(noUserKnownHostsFile, forKey: .noUserKnownHostsFile)
        try c.encodeIfPresent(hashKnownHosts, forKey: .hashKnownHosts)
        try c.encodeIfPresent(caSignatureAlgorithms, forKey: .caSignatureAlgorithms)
        try c.encodeIfPresent(requiredRSASize, forKey: .requiredRSASize)
        try c.encodeIfPresent(kexAlgorithms, forKey: .kexAlgorithms)
        try c.encodeIfPresent(ciphers, forKey: .ciphers)
        try c.encodeIfPresent(macs, forKey: .macs)
        try c.encode(paths(revokedHostKeys), forKey: .revokedHostKeys)
        try c.encodeIfPresent(knownHostsCommand, forKey: .knownHostsCommand)
        try c.encodeIfPresent(fingerprintHash.map { CleanText($0, limit: 16).value }, forKey: .fingerprintHash)
        try c.encodeIfPresent(unjudged, forKey: .unjudged)
        try c.encodeIfPresent(noHostAuthenticationForLocalhost, forKey: .noHostAuthenticationForLocalhost)
        try c.encodeIfPresent(verifyHostKeyDNS, forKey: .verifyHostKeyDNS)
        try c.encodeIfPresent(addressFamily, forKey: .addressFamily)
    }

    /// The `-o` options that make `ssh` use these settings (the known_hosts and revocation files
    /// are the caller's, who may replace them).
    public var commandLineOptions: [String] {
        var options: [String] = []
        func add(_ keyword: String, _ value: String) { options += ["-o", "\(keyword)=\(value)"] }
        if let hostKeyAlgorithms { add("HostKeyAlgorithms", hostKeyAlgorithms.description) }
        if let checkHostIP { add("CheckHostIP", checkHostIP ? "yes" : "no") }
        if let caSignatureAlgorithms { add("CASignatureAlgorithms", caSignatureAlgorithms.description) }
        if let kexAlgorithms { add("KexAlgorithms", kexAlgorithms.description) }
        if let ciphers { add("Ciphers", ciphers.description) }
        if let macs { add("MACs", macs.description) }
        if let requiredRSASize { add("RequiredRSASize", String(requiredRSASize)) }
        if let noHostAuthenticationForLocalhost { add("NoHostAuthenticationForLocalhost", noHostAuthenticationForLocalhost ? "yes" : "no") }
        if let verifyHostKeyDNS { add("VerifyHostKeyDNS", verifyHostKeyDNS.rawValue) }
        if let addressFamily { add("AddressFamily", addressFamily.rawValue) }
        return options
    }
}

/// A setting in force for a host that changes `ssh`'s host-key decision in a way fleettrust does
/// not reproduce (`KnownHostsCommand`, `CanonicalizeHostname`, a value `ssh` would refuse, a
/// `Match` criterion fleettrust cannot evaluate): the reason a host is `unchecked`.
public struct UnjudgedSetting: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The keyword (or `Match exec` …) as ssh_config spells it.
    public var keyword: String
    /// Where it was set; nil for a setting from the command line.
    public var location: SourceLocation?
    /// Why fleettrust cannot judge under it, as one clause.
    public var why: String

    public init(keyword: String, location: SourceLocation?, why: String) {
        self.keyword = keyword
        self.location = location
        self.why = why
    }

    public var description: String {
        "\(keyword)\(location.map { " (\($0))" } ?? ""): \(why)"
    }

    enum CodingKeys: String, CodingKey { case keyword, location, why }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(CleanText(keyword, limit: 200).value, forKey: .keyword)
        try c.encode(location?.reportText, forKey: .location)
        try c.encode(CleanText(why, limit: 300).value, forKey: .why)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        keyword = try c.decode(String.self, forKey: .keyword)
        why = try c.decode(String.self, forKey: .why)
        location = try c.decodeIfPresent(String.self, forKey: .location).map(SourceLocation.init(reportText:))
    }
}

extension SourceLocation {
    /// A location as a report writes it (`file:line`, cleaned); a text without a line is line 0.
    init(reportText text: String) {
        guard let colon = text.lastIndex(of: ":"), let line = Int(text[text.index(after: colon)...]) else {
            self.init(file: text, line: 0)
            return
        }
        self.init(file: String(text[..<colon]), line: line)
    }

    /// How a report writes a location: `file:line`, cleaned.
    var reportText: String { CleanText(description, limit: 1100).value }
}
