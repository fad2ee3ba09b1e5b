/// How the judge reads what a host's `KnownHostsCommand` printed (`ProbeResult.knownHostsCommand`):
/// a known_hosts source beside the files, for the lookups `ssh` runs the command for, and never
/// for the bare-name retry. The judge runs nothing; a probe without the command's lines (a
/// replay) leaves such a host unchecked.
extension FleetJudge {
    /// The command's lines as the judge needs them for one host.
    struct CommandSources {
        /// `%I=ORDER` lines for the bare host name: they order `ssh`'s host-key algorithms.
        var order: [KnownHosts.Match]
        /// Per probed key: its `%I=HOSTNAME` and `%I=ADDRESS` lines, matched.
        var perKey: [KnownHostsJudge.CommandLines]
        /// The first run that failed: the host's error (unless louder evidence stands).
        var failure: KnownHostsCommandRun?
        /// The command lines' text, for evidence that cites them.
        var texts: [String: KnownHosts]

        func lineText(path: String, line: Int) -> String? {
            texts[path].map { $0.lineText(path: path, line: line) }
        }
    }

    /// The command's lines for this host and probe, matched against the lookup strings; nil when
    /// the host has no command or the probe carries no output.
    static func commandSources(_ host: InventoryHost, _ result: ProbeResult, target: ConnectionTarget,
                               options: KnownHosts.Options) -> CommandSources? {
        guard host.sshOptions.knownHostsCommand != nil, let output = result.knownHostsCommand else { return nil }
        let lookup = target.lookup
        let ipString = target.checkHostIPAddress.map { LookupName.hostPort(LookupName.canonicalHost($0), port: target.port) }
        var texts: [String: KnownHosts] = [:]
        func matches(_ run: KnownHostsCommandRun?, _ name: String?) -> [KnownHosts.Match] {
            guard let run, run.failure == nil, let name else { return [] }
            let source = KnownHosts(files: [run.lines], options: options)
            let found = source.entries(matching: name)
            if !found.isEmpty { texts[run.tag] = source }
            return found
        }
        let order = matches(output.order, lookup.host)
        let perKey = result.keys.indices.map { index in
            KnownHostsJudge.CommandLines(host: matches(index < output.hostName.count ? output.hostName[index] : nil, lookup.hostString),
                                         address: matches(index < output.address.count ? output.address[index] : nil, ipString))
        }
        return CommandSources(order: order, perKey: perKey, failure: output.failure, texts: texts)
    }

    /// Why a host with a command is not judged: the command was not run for this probe.
    static func commandNotRun(_ host: InventoryHost, _ result: ProbeResult) -> UnjudgedSetting? {
        guard let command = host.sshOptions.knownHostsCommand, result.knownHostsCommand == nil else { return nil }
        return UnjudgedSetting(keyword: "KnownHostsCommand", location: command.location,
                               why: "the command was not run for this judgement (a replayed scan runs none), and ssh reads the keys it prints")
    }
}

extension PolicyDecision {
    /// A `KnownHostsCommand` that failed fails `ssh`'s connection: the host is an `error` naming
    /// it, unless a louder answer (changed, revoked…) stands from the rest, or nothing was checked.
    func overruled(byCommandFailure failure: KnownHostsCommandRun?) -> PolicyDecision {
        guard let failure, status != .unchecked, status.alarmLevel < 2 else { return self }
        return PolicyDecision(status: .error, reason: .probeFailed,
                              failure: .trustSource(failure.failureSentence))
    }
}
