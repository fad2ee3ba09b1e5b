/// The rule that makes fleettrust never quieter than `ssh` by construction: a host whose recorded
/// keys `ssh` would compare against, and for which the probe did not prove the key `ssh` would
/// meet once the server had answered, is `unverified` (an alarm), never `error` or `new`.
///
/// Every gap in our client (a transport rule read differently from OpenSSH, an algorithm we do not
/// implement, a hostile server that fails only our client) would otherwise turn `ssh`'s CHANGED
/// into a quiet `error`. Only the failures `ssh` shares keep their status: nothing answered (name,
/// TCP, a proxy hop that failed; not a ProxyCommand we refused to run, which `ssh` runs), `ssh`
/// would not start or would refuse the key itself, or the server offers no host-key algorithm, or
/// no key exchange method, that `ssh` offers this host (its defaults or the host's
/// `HostKeyAlgorithms`/`KexAlgorithms`; the server's lists known from its own KEXINIT, never
/// inferred). A server that answers our client with lists it would not show `ssh` is therefore
/// never a shared failure unless `ssh`'s own offer fails on them too. When in doubt, the host is
/// unverified. The judge applies this once, to every
/// probe path alike (live, libssh fallback, replay).
struct UnprovedKeyRule: Sendable {
    /// The host-key algorithms `ssh` offers this host (nil: its setting selects nothing).
    let sshHostKeyAlgorithms: [String]?
    /// The server's own list, when a KEXINIT was read (never inferred from the keys).
    let serverHostKeyAlgorithms: [String]?
    /// The key exchange methods `ssh` offers this host (empty: its setting removes them all).
    var sshKeyExchangeAlgorithms = KeyExchangeAlgorithms.openSSHDefault
    /// The server's key exchange methods, when a KEXINIT was read.
    var serverKeyExchangeAlgorithms: [String]?
    /// How the probe's connection shaped like `ssh`'s failed, when it did: the key `ssh` meets is
    /// then unproved, whatever the other connections proved.
    var sshConnectionFailure: ProbeFailure?

    /// The failure that leaves the key `ssh` would meet unproved, if `ssh` does not share it.
    /// `failure` is the host's (no key proved, or the judge's refusal); `attempts` are the
    /// probe's per-connection failures, which matter when the server's list is unknown: then
    /// which key `ssh` meets was inferred from the keys we happened to prove.
    func gap(failure: HostFailure?, attempts: [ProbeFailure], provedKeys: Bool) -> HostFailure? {
        if let sshConnectionFailure, !sshShares(.probe(sshConnectionFailure)) { return .probe(sshConnectionFailure) }
        if let failure { return sshShares(failure) ? nil : failure }
        guard provedKeys, serverHostKeyAlgorithms == nil else { return nil }
        return attempts.first { !sshShares(.probe($0)) }.map(HostFailure.probe)
    }

    /// Whether `ssh` 9.2 fails the same way against the same server.
    func sshShares(_ failure: HostFailure) -> Bool {
        switch failure {
        case .trustSourceFailed: return true
        case .keyRefused(let refusal):
            switch refusal {
            case .hostKeyAlgorithmsSelectNothing, .rsaKeyTooShort: return true
            case .noCommonAlgorithm: return serverHostKeyAlgorithms != nil
            case .negotiatedKeyNotProbed: return false
            }
        case .probe(let probe):
            switch probe.stage {
            case .common(.resolve), .common(.connect), .common(.cancelled): return true
            // A ProxyCommand fleettrust refuses to run is one `ssh` runs: nothing `ssh` shares.
            case .common(.proxy): return probe.code != .proxyCommandNotAllowed
            // Our client sends its identification as soon as it is connected, as `ssh` does, so a
            // server can read it and stall or close on ours alone: once connected, no silence is
            // known to be `ssh`'s too.
            case .ssh(.banner): return false
            case .ssh(.keyExchange):
                return probe.code == .noCommonAlgorithm && (noCommonHostKeyAlgorithm || noCommonKeyExchange)
            case .ssh(.hostKey), .tls: return false
            }
        }
    }

    /// `failure`, when the server answered and `ssh` would not fail the same way (the server's and
    /// `ssh`'s lists unknown, so a missing algorithm counts): a scanner that proved nothing there
    /// is another view of the host, for split views.
    static func answered(_ failure: ProbeFailure) -> ProbeFailure? {
        // A scanner whose server never spoke to it (or that ran nothing to reach it) saw no other view of the host.
        if failure.stage == .banner, failure.code == .bannerTimeout || failure.code == .connectionClosed { return nil }
        if failure.stage == .proxy { return nil }
        return UnprovedKeyRule(sshHostKeyAlgorithms: nil, serverHostKeyAlgorithms: nil).sshShares(.probe(failure)) ? nil : failure
    }

    /// The server's KEXINIT offers no host-key algorithm `ssh` offers: `ssh` says "no matching
    /// host key type found" too. (A missing key-exchange, cipher or MAC algorithm is ours alone
    /// to lack: `ssh`'s sets differ from our client's.)
    private var noCommonHostKeyAlgorithm: Bool {
        guard let server = serverHostKeyAlgorithms, let client = sshHostKeyAlgorithms else { return false }
        return HostKeyAlgorithms.negotiate(client: client, server: server) == nil
    }

    /// The server's KEXINIT offers no key exchange method `ssh` offers this host: `ssh` says "no
    /// matching key exchange method found" too.
    private var noCommonKeyExchange: Bool {
        guard let server = serverKeyExchangeAlgorithms else { return false }
        return !server.contains(where: sshKeyExchangeAlgorithms.contains)
    }
}
