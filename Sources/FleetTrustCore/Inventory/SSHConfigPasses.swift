/// `ssh`'s passes over its configuration for one host (ssh.c `main`, OpenSSH 9.2): a first pass
/// with the name as typed; then, when `CanonicalizeHostname` is on or a `Match final` asked
/// for it, the host name after `HostName` (lower-cased unless an address) is canonicalized
/// (`SSHCanonicalization`), becomes the `HostName`, and a final pass reads the files again with
/// `Host` lines matching it and `Match canonical` / `Match final` holding. A value obtained in
/// the first pass is kept (the first value wins across passes).
///
/// Canonicalizing needs the system resolver (`InventoryReadOptions.hostNameResolver`); where
/// none is given (replay, fuzzing) the host is `unchecked` naming the keyword, as before. Each
/// pass runs the `Match exec` commands it reaches again, as `ssh` does (`SSHMatchExec`).
enum SSHConfigPasses {
    /// `segments` may leave out blocks the alias cannot match in the first pass; `finalSegments`
    /// gives those the final pass's host name can match (default: the same).
    static func collect(alias: String, segments: [SSHConfigLayout.Segment], finalSegments: ((String) -> [SSHConfigLayout.Segment])? = nil,
                        options: InventoryReadOptions,
                        into settings: inout SSHHostSettings, from ownership: SSHLineOwnership,
                        taking: (SSHOption) -> Bool = { _ in true }) {
        var exec = SSHMatchExec(ownership: ownership, options: options)
        let wantsFinalPass = SSHConfigReader.collect(alias: alias, segments: segments, options: options, into: &settings,
                                                     exec: &exec, from: ownership, taking: taking)
        var canonicalization = settings.canonicalization
        canonicalization.family = settings.options.addressFamily ?? .any
        guard canonicalization.mode != .no || wantsFinalPass else { return }
        // `resolve_addr`: an address is written in its numeric form (`127.35` is `127.0.0.35`).
        var host = settings.address(hostArgument: alias)
        host = LookupName.canonicalAddress(host) ?? host.lowercased()
        if canonicalization.mode != .no {
            guard let resolver = options.hostNameResolver else {
                settings.addUnjudged(UnjudgedSetting(keyword: "CanonicalizeHostname", location: nil,
                                                     why: "ssh may look the host up under another name, and no resolver was given"))
                return
            }
            let port = settings.port ?? 22
            var outcome = canonicalization.canonicalize(host, port: port, direct: settings.isDirect, resolver: resolver)
            if outcome == .notCanonicalized {
                outcome = canonicalization.followingBareName(host, port: port, direct: settings.isDirectOnceNoneCleared, resolver: resolver)
            }
            switch outcome {
            case .name(let name):
                host = name
            case .notCanonicalized:
                break
            case .refused(let why):
                settings.addUnjudged(UnjudgedSetting(keyword: "CanonicalizeFallbackLocal", location: nil, why: "ssh stops: \(why)"))
                return
            case .unanswered(let why):
                settings.addUnjudged(UnjudgedSetting(keyword: "CanonicalizeHostname", location: nil, why: why))
                return
            }
        }
        settings.takeFinalHostName(host)
        SSHConfigReader.collect(alias: alias, segments: finalSegments?(host) ?? segments, options: options, into: &settings,
                                exec: &exec, from: ownership, finalHost: host, taking: taking)
    }
}
