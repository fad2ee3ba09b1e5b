import Foundation

/// Reads an OpenSSH client configuration as an inventory: each concrete `Host` alias becomes a host.
///
/// Each alias is resolved the way `ssh alias` would resolve it: every `Host`/`Match` block that
/// applies contributes, in file order, and the first value obtained for a keyword wins, so
/// wildcard blocks (`Host *`) act as defaults. Each line goes through the keyword table
/// (`SSHOption`) and the host's settings are collected and expanded as `ssh` does
/// (`SSHHostSettings`), in `ssh`'s passes (`SSHConfigPasses`). `Match exec` runs only for the
/// user's own configuration (`SSHMatchExec`); a block behind one that is not run, or behind a
/// `Match` criterion fleettrust cannot read, makes the host unjudged when its other conditions
/// hold. `ProxyJump` / `ProxyCommand` are recorded, not followed.
enum SSHConfigReader {
    static func read(_ contents: String, options: InventoryReadOptions, log: inout DiagnosticLog) -> [InventoryHost] {
        let layout = SSHConfigLayout(contents: contents, options: options, log: &log)
        var exact: [String: [Int]] = [:]
        var general: [Int] = []
        for (index, segment) in layout.segments.enumerated() {
            if segment.conditions.count == 1, case .host(let patterns) = segment.conditions[0],
               patterns.allSatisfy(SSHConfigPattern.isConcrete) {
                for pattern in Set(patterns) { exact[pattern, default: []].append(index) }
            } else {
                general.append(index)
            }
        }
        // Lines of the user's own configuration (the inventory may be it, or Include it) are theirs: their
        // commands (ProxyCommand, KnownHostsCommand, Match exec) are run as ssh runs them; the others never.
        let ownership = SSHLineOwnership(layout: layout, userConfigurationFiles: options.sshConfiguration?.files ?? [])
        var hosts: [InventoryHost] = []
        for alias in layout.aliases.prefix(options.maxHosts) {
            let order = merged(general, exact[alias.name] ?? [])
            let host = resolve(alias.name, at: alias.location, segments: order.map { layout.segments[$0] },
                               finalSegments: { name in merged(general, exact[name] ?? []).map { layout.segments[$0] } },
                               options: options, ownership: ownership)
            if host.hasUnsafeText {
                log.warning(at: alias.location, "host \(InventoryDiagnostic.quote(alias.name)) contains control characters or invalid UTF-8; it is shown sanitized")
            }
            hosts.append(host)
        }
        if layout.aliases.count > options.maxHosts {
            log.error(at: layout.aliases[options.maxHosts].location, "more than \(options.maxHosts) hosts; the rest are skipped",
                      skipping: layout.aliases.count - options.maxHosts)
        }
        return hosts
    }

    /// `segments` are those that can apply to the alias; the final pass matches `Host` lines
    /// against another name, whose segments `finalSegments` gives.
    private static func resolve(_ alias: String, at location: SourceLocation, segments: [SSHConfigLayout.Segment],
                                finalSegments: @escaping (String) -> [SSHConfigLayout.Segment], options: InventoryReadOptions,
                                ownership: SSHLineOwnership) -> InventoryHost {
        var settings = SSHHostSettings()
        SSHConfigPasses.collect(alias: alias, segments: segments, finalSegments: finalSegments, options: options, into: &settings,
                                from: ownership)
        var host = settings.host(named: alias, hostArgument: alias, address: settings.address(hostArgument: alias),
                                 port: settings.port ?? 22, user: settings.user, options: options)
        host.source = location
        host.format = .sshConfig
        return host
    }

    /// Adds the settings of every segment that applies to `ssh alias` (those `taking` accepts),
    /// in order, the first value of a keyword winning; `exec` answers its `Match exec` criteria.
    /// `finalHost` is nil in the first pass; in the final pass it is the name `Host` lines match
    /// (the canonical host name). Returns whether a `Match final` asked for a final pass.
    @discardableResult
    static func collect<S: Sequence>(alias: String, segments: S, options: InventoryReadOptions, into settings: inout SSHHostSettings,
                                     exec: inout SSHMatchExec, from ownership: SSHLineOwnership, finalHost: String? = nil,
                                     taking: (SSHOption) -> Bool = { _ in true }) -> Bool
    where S.Element == SSHConfigLayout.Segment {
        var wantsFinalPass = false
        exec.startPass()
        for segment in segments {
            let hostName = settings.address(hostArgument: alias)
            let facts = MatchFacts(alias: finalHost ?? alias, originalHost: alias, hostName: hostName,
                                   user: settings.user ?? options.localUser, localUser: options.localUser, finalPass: finalHost != nil,
                                   exec: SSHMatchExec.Facts(host: hostName, originalHost: alias, port: settings.port ?? 22,
                                                            remoteUser: settings.user ?? options.localUser, hostKeyAlias: settings.hostKeyAlias,
                                                            home: options.homeDirectory, localUser: options.localUser))
            wantsFinalPass = wantsFinalPass || segment.asksForFinalPass
            var unsupported: UnjudgedSetting?
            var stopped: [UnjudgedSetting] = []
            let applies = segment.conditions.allSatisfy { holds($0, facts, exec: &exec, unsupported: &unsupported, stopped: &stopped) }
            // `ssh` refuses the whole configuration there: nothing of the block is taken.
            stopped.forEach { settings.addUnjudged($0) }
            guard applies, stopped.isEmpty else { continue }
            if let unsupported {
                // `User` only feeds `%r` in file names: not the decision.
                if segment.settings.contains(where: { if case .user = $0.option { return false } else { return true } }) {
                    settings.addUnjudged(unsupported)
                }
                continue
            }
            for (option, location) in segment.settings where taking(option) { settings.apply(option, at: location, from: ownership.origin(of: location)) }
        }
        return wantsFinalPass
    }

    /// What `Match` criteria look at (`readconf.c:match_cfg_line`): the alias as typed, the
    /// `HostName` obtained so far, the remote user obtained so far (else the local one), and for
    /// `exec` the values of its tokens.
    private struct MatchFacts {
        /// What `Host` lines match: the alias, in the final pass the canonical host name.
        var alias: String
        var originalHost: String
        var hostName: String
        var user: String
        var localUser: String
        var finalPass: Bool
        var exec: SSHMatchExec.Facts
    }

    /// Whether a condition holds; an unsupported `Match` or a `Match exec` that could not answer
    /// holds as far as fleettrust can tell and is handed back in `unsupported`; one `ssh` stops
    /// on is handed back in `stopped`.
    private static func holds(_ condition: SSHConfigCondition, _ facts: MatchFacts, exec: inout SSHMatchExec,
                              unsupported: inout UnjudgedSetting?, stopped: inout [UnjudgedSetting]) -> Bool {
        let alias = facts.alias
        switch condition {
        case .unsupported(let setting):
            unsupported = unsupported ?? setting
            return true
        case .host(let patterns):
            var active = false
            for pattern in patterns {
                if pattern.hasPrefix("!") {
                    if SSHConfigPattern.matches(alias, String(pattern.dropFirst())) { return false }
                } else if SSHConfigPattern.matches(alias, pattern) {
                    active = true
                }
            }
            return active
        case .match(let criteria):
            var unknown: (text: String, location: SourceLocation)?
            // Left to right, stopping at the first that fails: `ssh` skips an `exec` after one.
            let holds = criteria.allSatisfy { criterion in
                let result: Bool
                switch criterion.kind {
                case .all: result = true
                case .host(let list): result = SSHConfigPattern.matchesList(facts.hostName, list) == .match
                case .user(let list): result = SSHConfigPattern.matchesList(facts.user, list, lowercase: false) == .match
                case .localUser(let list): result = SSHConfigPattern.matchesList(facts.localUser, list, lowercase: false) == .match
                case .originalHost(let list): result = SSHConfigPattern.matchesList(facts.originalHost, list) == .match
                case .canonical, .final: result = facts.finalPass
                case .exec(let command, let location):
                    switch exec.evaluate(command, at: location, negated: criterion.negated, facts: facts.exec) {
                    case .exitedZero(let matched): result = matched
                    case .unanswered(let setting):
                        unsupported = unsupported ?? setting
                        return true
                    case .sshStops(let setting):
                        stopped.append(setting)
                        return true
                    }
                case .unsupported(let text, let location):
                    unknown = unknown ?? ((criterion.negated ? "!" : "") + text, location)
                    return true
                }
                return result != criterion.negated
            }
            if holds, let unknown {
                unsupported = unsupported ?? UnjudgedSetting(keyword: "Match \(unknown.text)", location: unknown.location,
                                                             why: "fleettrust does not evaluate this criterion, so this block may apply")
            }
            return holds
        }
    }

    /// Merges two ascending index lists.
    private static func merged(_ first: [Int], _ second: [Int]) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(first.count + second.count)
        var i = 0
        var j = 0
        while i < first.count || j < second.count {
            if j == second.count || i < first.count && first[i] < second[j] {
                result.append(first[i])
                i += 1
            } else {
                result.append(second[j])
                j += 1
            }
        }
        return result
    }
}
