import FleetTrustCore

/// The `--connect-command` template, expanded into an argument vector (no shell involved).
///
/// `ssh` is run the way the judgement assumed it connects, so the key just trusted is the key it
/// meets and accepts: strict host-key checking, the host's own known_hosts files, its
/// `HostKeyAlias` and `HostKeyAlgorithms`, and for an ssh_config inventory that very file (`-F`)
/// and the host's alias, so every other setting (`ProxyJump`, `User`, …) applies too; a route
/// from another inventory (Ansible's `-J`/`ProxyCommand`) is passed as `-J` / `-o ProxyCommand=`.
///
/// Placeholders: `{options}` (those options, as several arguments), `{port}`, `{target}`
/// (`user@address`, or the alias for an ssh_config inventory), `{host}` (the address), `{name}`
/// (the inventory name).
public struct ConnectCommand: Equatable, Sendable {
    public static let defaultTemplate = "ssh {options} -p {port} {target}"

    public var template: String
    public var user: String?
    /// `--ssh-config`: the file the scan resolved routes from other inventories through, so that
    /// connect resolves their hops the same way.
    public var routeConfig: String?

    public init(template: String = ConnectCommand.defaultTemplate, user: String? = nil, routeConfig: String? = nil) {
        self.template = template
        self.user = user
        self.routeConfig = routeConfig
    }

    /// For hosts whose policy decides without known_hosts (`pin-only`, `ca`): the lines to hand
    /// `ssh` instead, so it still checks the key strictly: the pinned keys the host presented, or a
    /// `@cert-authority` line for the pinned CA that signed its certificate. Nil for other hosts.
    public static func policyKnownHosts(for judged: JudgedHost) -> String? {
        let name = judged.lookup.hostString
        switch judged.policy {
        case PolicyName.pinOnly.rawValue:
            let lines = judged.keys.compactMap { key -> String? in
                guard let plain = key.key, !plain.isCertificate, key.pin == .matched else { return nil }
                return "\(name) \(plain.openSSHLine)"
            }
            return lines.isEmpty ? nil : lines.joined(separator: "\n") + "\n"
        case PolicyName.ca.rawValue:
            let lines = judged.keys.compactMap { key -> String? in
                guard let certificate = key.certificate, key.pin == .matched else { return nil }
                return "@cert-authority \(name) \(certificate.signatureKey.openSSHLine)"
            }
            return lines.isEmpty ? nil : lines.joined(separator: "\n") + "\n"
        default:
            return nil
        }
    }

    /// The options that make `ssh` judge this host exactly as it was judged; `knownHosts` replaces
    /// the files (for `policyKnownHosts`).
    public func options(for judged: JudgedHost, knownHosts: [String]? = nil) -> [String] {
        let host = judged.host
        var options: [String] = []
        if let file = host.sshConfigFile {
            options += ["-F", file]
        } else {
            // The ssh configuration the host was judged under (`--ssh-config`), also for its hops.
            if let routeConfig { options += ["-F", routeConfig] }
            // The route the probe took, which the inventory gave outside any ssh_config (Ansible's
            // ssh arguments): ssh must take it too, or it could meet another machine's key.
            if case .command(let command) = judged.route.hops.first {
                options += ["-o", "ProxyCommand=\(command)"]
            } else if !judged.route.hops.isEmpty {
                options += ["-J", judged.route.jumpHosts.map(\.description).joined(separator: ",")]
            }
        }
        // ssh merges all its files into one list before judging, so naming every file judged
        // against as user files (and no global ones) gives the same answer.
        let files = knownHosts ?? (judged.knownHostsFiles.isEmpty ? ["/dev/null"] : judged.knownHostsFiles)
        options += ["-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=\(Self.list(files))",
                    "-o", "GlobalKnownHostsFile=/dev/null"]
        if let alias = host.hostKeyAlias { options += ["-o", "HostKeyAlias=\(alias)"] }
        options += host.sshOptions.commandLineOptions
        return options
    }

    private static func list(_ files: [String]) -> String {
        files.map { $0.contains(" ") ? "\"\($0)\"" : $0 }.joined(separator: " ")
    }

    /// A host or user that starts with `-` would be read by `ssh` as an option (`-oProxyCommand=…`).
    public struct UnsafeTarget: Error, CustomStringConvertible {
        public var value: String
        public var description: String { "refusing to connect: '\(Sanitizer.clean(value, limit: 80))' would be read as an option" }
    }

    public func arguments(for judged: JudgedHost, knownHosts: [String]? = nil) throws(UnsafeTarget) -> [String] {
        let host = judged.host
        let login = host.user ?? user
        for value in [host.address, host.name, login ?? ""] where value.hasPrefix("-") { throw UnsafeTarget(value: value) }
        let destination = host.format == .sshConfig && host.source != nil && host.source?.file != "<stdin>" ? host.name : host.address
        let target = login.map { "\($0)@\(destination)" } ?? destination
        return template.split(whereSeparator: { $0 == " " || $0 == "\t" }).flatMap { word -> [String] in
            if word == "{options}" { return options(for: judged, knownHosts: knownHosts) }
            return [String(word)
                .replacingAll("{port}", with: String(host.port))
                .replacingAll("{target}", with: target)
                .replacingAll("{host}", with: host.address)
                .replacingAll("{name}", with: host.name)]
        }
    }
}

extension String {
    func replacingAll(_ placeholder: String, with value: String) -> String {
        split(separator: placeholder, omittingEmptySubsequences: false).joined(separator: value)
    }
}
