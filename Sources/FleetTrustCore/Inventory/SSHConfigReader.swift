/// Reads an OpenSSH client configuration as an inventory: each concrete `Host` alias becomes a host.
///
/// Each alias is resolved the way `ssh alias` would resolve it: every `Host`/`Match` block that
/// applies contributes, in file order, and the first value obtained for a keyword wins, so
/// wildcard blocks (`Host *`) act as defaults. `HostName` has `%h` expanded; `UserKnownHostsFile`
/// gets `~` and its `%` tokens expanded (`GlobalKnownHostsFile` is used as written, as `ssh` does). `HostKeyAlias`,
/// `HostKeyAlgorithms`, `CheckHostIP` and `HashKnownHosts` are kept for the judge, which decides
/// as `ssh` would under them. `ProxyJump` / `ProxyCommand` are recorded, not followed.
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
        var hosts: [InventoryHost] = []
        for alias in layout.aliases.prefix(options.maxHosts) {
            let order = merged(general, exact[alias.name] ?? [])
            let host = resolve(alias.name, at: alias.location, segments: order.lazy.map { layout.segments[$0] },
                               options: options)
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

    private static func resolve<S: Sequence>(_ alias: String, at location: SourceLocation, segments: S,
                                             options: InventoryReadOptions) -> InventoryHost
    where S.Element == SSHConfigLayout.Segment {
        var hostName: String?
        var port: Int?
        var user: String?
        var hostKeyAlias: String?
        var knownHostsFiles: [String]?
        var globalFiles: [String]?
        var proxy: String??
        var sshOptions = SSHHostOptions()
        for segment in segments {
            let matchName = hostName.map { SSHConfigTokens.expand($0, ["h": alias]) } ?? alias
            guard segment.conditions.allSatisfy({ holds($0, alias: alias, hostName: matchName) }) else { continue }
            for setting in segment.settings {
                switch setting {
                case .hostName(let value): hostName = hostName ?? value
                case .port(let value): port = port ?? value
                case .user(let value): user = user ?? value
                case .hostKeyAlias(let value): hostKeyAlias = hostKeyAlias ?? value
                case .userKnownHostsFiles(let value): knownHostsFiles = knownHostsFiles ?? value
                case .proxy(let value): proxy = proxy ?? .some(value)
                case .hostKeyAlgorithms(let value): sshOptions.hostKeyAlgorithms = sshOptions.hostKeyAlgorithms ?? value
                case .globalKnownHostsFiles(let value): globalFiles = globalFiles ?? value
                case .checkHostIP(let value): sshOptions.checkHostIP = sshOptions.checkHostIP ?? value
                case .hashKnownHosts(let value): sshOptions.hashKnownHosts = sshOptions.hashKnownHosts ?? value
                case .revokedHostKeys(let value): sshOptions.revokedHostKeys = sshOptions.revokedHostKeys ?? value
                }
            }
        }
        let address = hostName.map { SSHConfigTokens.expand($0, ["h": alias]) } ?? alias
        let finalPort = port ?? 22
        let values = SSHConfigTokens.knownHostsValues(alias: alias, hostName: address.lowercased(), port: finalPort,
                                                      user: user, hostKeyAlias: hostKeyAlias, options: options)
        func expand(_ files: [String]) -> [String] {
            files.map { file -> String in
                let expanded = file.hasPrefix("~/") || file == "~" ? options.homeDirectory + file.dropFirst() : file
                return SSHConfigTokens.expand(expanded, values)
            }
        }
        // ssh 9.2 expands `~` and `%` tokens in UserKnownHostsFile only; GlobalKnownHostsFile is used as written.
        sshOptions.globalKnownHostsFiles = globalFiles
        return InventoryHost(name: alias, address: address, port: finalPort, user: user, hostKeyAlias: hostKeyAlias,
                             userKnownHostsFiles: expand(knownHostsFiles ?? []), source: location, format: .sshConfig,
                             proxy: proxy ?? nil, sshOptions: sshOptions)
    }

    private static func holds(_ condition: SSHConfigCondition, alias: String, hostName: String) -> Bool {
        switch condition {
        case .never:
            return false
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
            return criteria.allSatisfy { criterion in
                let result: Bool
                switch criterion.kind {
                case .all: result = true
                case .host(let list): result = SSHConfigPattern.matchesList(hostName, list) == .match
                case .originalHost(let list): result = SSHConfigPattern.matchesList(alias, list) == .match
                }
                return result != criterion.negated
            }
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
