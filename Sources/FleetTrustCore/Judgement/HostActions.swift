/// What a person may do with one judged host (trust it, pin it, forget its known_hosts lines,
/// connect to it), decided from the judgement alone.
///
/// Eligibility is a fact of the judged host, as its status is: the dashboard's key handling and
/// its footer hints both read it, and a command-line decision could, so no screen offers an action
/// another would refuse. Renderers put the refusals into words; they never decide them.
public struct HostActions: Hashable, Sendable {
    /// What `trust` does for the host.
    public enum Trust: Hashable, Sendable {
        /// Save these keys to known_hosts, after the person confirms them.
        case save([HostKey])
        /// Replace the lines a changed key supersedes, confirmed by typing the host name.
        case replace(JudgedHost.Replacement)
        /// The policy wants a pin (or it is a TLS endpoint no CA vouches for): trusting is pinning.
        case pin
        case refused(JudgedHost.SaveRefusal)
    }

    /// What `pin` records for the host.
    public enum Pin: Hashable, Sendable {
        /// An SSH host's plain, usable keys.
        case keys([HostKey])
        /// A TLS endpoint's leaf public key (`pin-sha256:`) for `[name]:port`.
        case leaf(TLSCertificate, pattern: String)
        /// The host is in this alarm: resolve it before pinning.
        case inAlarm(HostStatus)
        /// Nothing to pin: no key `ssh` could use, or no certificate.
        case nothingToPin
    }

    public let trust: Trust
    /// Proved keys `trust` leaves out: trust on first use (and a replacement) saves only what
    /// `ssh -o StrictHostKeyChecking=accept-new` would, and keys a pin names (`FirstUseKeys`).
    public let trustWithheld: [HostKey]
    public let pin: Pin
    /// Proved keys `pin` leaves out: a pin vouches only for keys something besides this probe's
    /// other connections vouches for (the key `ssh` meets, keys known_hosts trusts, keys pinned).
    public let pinWithheld: [HostKey]
    /// The known_hosts lines a forget removes (those not kept, `RecordedLine.keptByForget`).
    public let forgettable: [RecordedLine]
    /// The status a forget must be confirmed against by typing the host name (an alarm), if any.
    public let forgetAlarm: HostStatus?
    /// Connecting hands the terminal to `ssh`: only to a host `ssh` would trust.
    public let connect: Bool

    public init(_ judged: JudgedHost) {
        var trustWithheld: [HostKey] = []
        switch judged.saving {
        case .save(let offered):
            let choice = FirstUseKeys(judged, offered: offered)
            trustWithheld = choice.withheld
            trust = choice.saved.isEmpty ? .refused(.noKeySSHMeets) : .save(choice.saved)
        case .replace:
            if let replacement = judged.replacement {
                let choice = FirstUseKeys(judged, offered: replacement.keys)
                trustWithheld = choice.withheld
                trust = choice.saved.isEmpty ? .refused(.noKeySSHMeets)
                    : .replace(JudgedHost.Replacement(keys: choice.saved, superseded: replacement.superseded))
            } else {
                trust = .refused(.nothingToSave)
            }
        case .refused(.notPinned): trust = .pin
        case .refused(.notSSH): trust = Self.tlsTrust(judged.status)
        case .refused(let refusal): trust = .refused(refusal)
        }
        self.trustWithheld = trustWithheld
        (pin, pinWithheld) = Self.pin(judged)
        forgettable = judged.recorded.filter { $0.keptByForget == nil }
        forgetAlarm = judged.status.alarmLevel == 2 ? judged.status : nil
        connect = judged.status == .trusted
    }

    /// A TLS endpoint has no known_hosts entry: trusting one no CA vouches for (or whose policy
    /// wants a pin) pins its leaf key; the others are refused by their status.
    private static func tlsTrust(_ status: HostStatus) -> Trust {
        switch status {
        case .untrusted, .unpinned: return .pin
        case .trusted: return .refused(.alreadyTrusted)
        case .pending: return .refused(.notProbedYet)
        case .unchecked: return .refused(.unchecked)
        default: return .refused(.notSSH)
        }
    }

    private static func pin(_ judged: JudgedHost) -> (Pin, withheld: [HostKey]) {
        if let tls = judged.tls {
            guard let leaf = tls.leaf else { return (.nothingToPin, []) }
            if [.pinMismatch, .nameMismatch].contains(judged.status) { return (.inAlarm(judged.status), []) }
            return (.leaf(leaf, pattern: PinSet.tlsPinPattern(for: judged.host)), [])
        }
        switch judged.status {
        case .trusted, .new, .unpinned:
            // Only keys something vouches for besides this probe: a pin made from the other
            // connections would prove a mix of machines (`FirstUseKeys`).
            var withheld: [HostKey] = []
            let usable = judged.keys.compactMap { key -> HostKey? in
                guard let plain = key.key, !plain.isCertificate, key.unusable == nil else { return nil }
                guard key.isNegotiated || key.verdict == .trusted || judged.pin.pinned.contains(plain.fingerprint) else {
                    withheld.append(plain)
                    return nil
                }
                return plain
            }
            return (usable.isEmpty ? .nothingToPin : .keys(usable), withheld)
        case .changed, .revoked, .pinMismatch, .invalidCertificate, .splitView, .unverified: return (.inAlarm(judged.status), [])
        default: return (.nothingToPin, [])
        }
    }
}

extension JudgedHost {
    /// What a person may do with the host.
    public var actions: HostActions { HostActions(self) }
}
