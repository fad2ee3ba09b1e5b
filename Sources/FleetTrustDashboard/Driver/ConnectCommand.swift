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
    /// Whether `ssh` is handed the route the host was probed through. Not for a recorded scan:
    /// that route is the scanner's, chosen by the document, and `ssh` here takes this machine's
    /// own (its configuration), as it would for any host.
    public var followsProbedRoute: Bool

    public init(template: String = ConnectCommand.defaultTemplate, user: String? = nil, routeConfig: String? = nil,
                followsProbedRoute: Bool = true) {
        self.template = template
        self.user = user
        self.routeConfig = routeConfig
        self.followsProbedRoute = followsProbedRoute
    }

    /// For hosts whose policy decides without known_hosts or beyond it (`pin-only`, `ca`,
    /// `pinned`): the lines to hand `ssh` instead, so it meets exactly the keys judged trusted: the
    /// pinned keys the host presented (under `pinned`, those known_hosts records too; a recorded key
    /// no pin names was not judged trusted, and `ssh` must not accept it), or a
    /// `@cert-authority` line for the pinned CA that signed its certificate, and always first a
    /// `@revoked` line for every revoked key the judgement found, so `ssh` refuses what was judged
    /// revoked under every policy. Nil for other hosts (their own files, revocations and all, are used).
    public static func policyKnownHosts(for judged: JudgedHost) -> String? {
        let name = judged.lookup.hostString
        let trusted: [String]
        switch judged.policy.builtIn {
        case .pinOnly:
            trusted = judged.keys.compactMap { key -> String? in
                guard let plain = key.key, !plain.isCertificate, key.pin == .matched else { return nil }
                return "\(name) \(plain.openSSHLine)"
            }
        case .pinned:
            trusted = judged.keys.compactMap { key -> String? in
                guard let plain = key.key, !plain.isCertificate, key.pin == .matched, key.verdict == .trusted else { return nil }
                return "\(name) \(plain.openSSHLine)"
            }
        case .ca:
            trusted = judged.keys.compactMap { key -> String? in
                guard let certificate = key.certificate, key.pin == .matched else { return nil }
                return "@cert-authority \(name) \(certificate.signatureKey.openSSHLine)"
            }
        default:
            return nil
        }
        return trusted.isEmpty ? nil : (revocationLines(for: judged) + trusted).joined(separator: "\n") + "\n"
    }

    /// `@revoked * KEY` for each key the judgement found revoked (by known_hosts or by the
    /// `RevokedHostKeys` file): the key itself (a certificate's certified key), or its CA when the
    /// evidence names the CA.
    static func revocationLines(for judged: JudgedHost) -> [String] {
        var seen = Set<String>()
        return judged.keys.flatMap { key -> [String] in
            guard let presented = key.key, let judgement = key.judgement,
                  key.says(.revoked) else { return [] }
            let authority = key.certificate?.signatureKey
            return judgement.evidence.filter { $0.role == .revocation || $0.role == .revokedHostKeys }.map { evidence in
                let revoked = authority.flatMap { $0.sha256Fingerprint == evidence.fingerprint ? $0 : nil }
                    ?? key.certificate?.key ?? presented
                return "@revoked * \(revoked.openSSHLine)"
            }
        }.filter { seen.insert($0).inserted }
    }

    /// The options that make `ssh` judge this host exactly as it was judged; `knownHosts` replaces
    /// the files (for `policyKnownHosts`). Every file is written so that `ssh` reads back that very
    /// file (`SSHOptionValue`), or refused.
    public func options(for judged: JudgedHost, knownHosts: [String]? = nil) throws(UnsafeTarget) -> [String] {
        let host = judged.host
        var options: [String] = []
        if let file = host.sshConfigFile {
            options += ["-F", file]
        } else {
            // The ssh configuration the host was judged under (`--ssh-config`), also for its hops.
            if let routeConfig { options += ["-F", routeConfig] }
            // The route the probe took, which the inventory gave outside any ssh_config (Ansible's
            // ssh arguments): ssh must take it too, or it could meet another machine's key.
            if followsProbedRoute, case .command(let command) = judged.route.hops.first {
                options += ["-o", "ProxyCommand=\(command)"]
            } else if followsProbedRoute, !judged.route.hops.isEmpty {
                options += ["-J", judged.route.jumpHosts.map(\.description).joined(separator: ",")]
            }
        }
        // ssh merges all its files into one list before judging, so naming every file judged
        // against as user files (and no global ones) gives the same answer.
        let files = knownHosts ?? (judged.knownHostsFiles.isEmpty ? ["/dev/null"] : judged.knownHostsFiles)
        let revoked = host.sshOptions.revokedHostKeys ?? []
        // ssh 9.2 reads one RevokedHostKeys file; judged against several, no command line says the same.
        guard revoked.count <= 1 else {
            throw UnsafeTarget(reason: "it was judged against \(revoked.count) RevokedHostKeys files, and ssh reads only one")
        }
        do throws(SSHOptionValue.Refusal) {
            options += ["-o", "StrictHostKeyChecking=yes",
                        "-o", "UserKnownHostsFile=" + (try Self.expandedFiles(files)),
                        "-o", "GlobalKnownHostsFile=/dev/null"]
            if let alias = host.hostKeyAlias { options += ["-o", "HostKeyAlias=" + (try SSHOptionValue.literal(alias))] }
            options += host.sshOptions.commandLineOptions
            if let file = revoked.first { options += ["-o", "RevokedHostKeys=" + (try SSHOptionValue.unexpandedFile(file))] }
        } catch {
            throw UnsafeTarget(reason: error.reason)
        }
        return options
    }

    private static func expandedFiles(_ files: [String]) throws(SSHOptionValue.Refusal) -> String {
        var written: [String] = []
        for file in files { written.append(try SSHOptionValue.expandedFile(file)) }
        return written.joined(separator: " ")
    }

    /// Why connect will not hand a host to `ssh`: a name, address or user `ssh` refuses on its
    /// command line (shell metacharacters, a leading `-` it would read as an option), or the
    /// inventory's refusal of the host.
    public struct UnsafeTarget: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { "refusing to connect: \(reason)" }
    }

    public func arguments(for judged: JudgedHost, knownHosts: [String]? = nil) throws(UnsafeTarget) -> [String] {
        let host = judged.host
        if let refusal = host.refusal { throw UnsafeTarget(reason: refusal.description) }
        let destination: SSHDestination
        let login: SSHUserName?
        do throws(SSHNameError) {
            destination = try SSHDestination(host)
            if let given = destination.user { login = given } else { login = try user.map { text throws(SSHNameError) in try SSHUserName(text) } }
        } catch {
            throw UnsafeTarget(reason: "its \(error.description)")
        }
        let name = host.format == .sshConfig && host.source != nil && host.source?.file != "<stdin>"
            ? destination.alias : destination.hostName
        let target = login.map { "\($0.value)@\(name.value)" } ?? name.value
        let judgedOptions = try options(for: judged, knownHosts: knownHosts)
        return template.split(whereSeparator: { $0 == " " || $0 == "\t" }).flatMap { word -> [String] in
            if word == "{options}" { return judgedOptions }
            return [String(word)
                .replacingAll("{port}", with: String(host.port))
                .replacingAll("{target}", with: target)
                .replacingAll("{host}", with: destination.hostName.value)
                .replacingAll("{name}", with: destination.alias.value)]
        }
    }
}

extension String {
    func replacingAll(_ placeholder: String, with value: String) -> String {
        split(separator: placeholder, omittingEmptySubsequences: false).joined(separator: value)
    }
}
