/// What the system resolver said when asked for a host name's SSHFP records, as data the judge
/// reads (the lookup itself is the probe side's, through `SSHFPResolving`).
public enum SSHFPAnswer: Hashable, Sendable {
    /// The SSHFP records of the answer section; `validated` is the AD bit as the resolver library
    /// passed it on (glibc clears it unless resolv.conf says `options trust-ad`), which is all
    /// `ssh` knows of DNSSEC (`RRSET_VALIDATED`).
    case records([SSHFPRecord], validated: Bool)
    /// No records `ssh` would use: the name or the type does not exist, the resolver failed or
    /// timed out, or the answer was malformed (`ssh`'s "DNS lookup error" is the same as none).
    case none(why: String)

    /// The records, empty for none.
    public var records: [SSHFPRecord] {
        if case .records(let records, _) = self { return records }
        return []
    }

    public var isValidated: Bool {
        if case .records(_, true) = self { return true }
        return false
    }
}

/// Asks the system resolver for SSHFP records as `ssh` does (`getrrsetbyname`: `res_query`
/// with DNSSEC OK set, the AD bit as the library leaves it), bounded in time. The core only
/// declares it: the lookup touches the network and lives with the probes.
public protocol SSHFPResolving: Sendable {
    func sshfpLookup(_ name: String) -> SSHFPAnswer
    /// Every name's answer (an implementation may ask for them at once).
    func sshfpAnswers(for names: Set<String>) -> [String: SSHFPAnswer]
}

extension SSHFPResolving {
    public func sshfpAnswers(for names: Set<String>) -> [String: SSHFPAnswer] {
        Dictionary(uniqueKeysWithValues: names.map { ($0, sshfpLookup($0)) })
    }

    /// The answers for every name these hosts have `ssh` look up.
    public func sshfpAnswers(for hosts: [InventoryHost]) -> [String: SSHFPAnswer] {
        let names = Set(hosts.compactMap(SSHFPQuery.name(for:)))
        return names.isEmpty ? [:] : sshfpAnswers(for: names)
    }
}

/// The name `ssh` asks DNS about for a host: the one it connects to (`HostName` applied), never
/// `HostKeyAlias`; none for an address literal (`is_numeric_hostname`).
public enum SSHFPQuery {
    public static func name(for host: InventoryHost) -> String? {
        guard let mode = host.sshOptions.verifyHostKeyDNS, mode != .no, host.endpointProtocol == .ssh else { return nil }
        return queryName(host.address)
    }

    /// `name` unless it is an IPv4 or IPv6 address (`getaddrinfo` with `AI_NUMERICHOST`).
    static func queryName(_ name: String) -> String? {
        LookupName.canonicalAddress(name) == nil ? name : nil
    }
}
