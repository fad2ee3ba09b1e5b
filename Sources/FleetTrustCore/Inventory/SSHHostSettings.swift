import Foundation

/// The settings in force for one host, collected the way `ssh` collects them (the first value
/// obtained for a keyword wins), and turned into the host's name, port and typed options with
/// `ssh`'s expansions. The ssh_config reader and Ansible's `-o` arguments both end here.
struct SSHHostSettings {
    var hostName: String?
    var port: Int?
    var user: String?
    var hostKeyAlias: String?
    var proxy: String??
    /// Who set `proxy`: a ProxyCommand is run only when the user's own configuration gave it.
    private var proxyOrigin: Origin?
    private var knownHostsCommand: (command: String, location: SourceLocation?, origin: Origin)?
    private var userFiles: (files: [String], location: SourceLocation?)?
    private var globalFiles: (files: [String], location: SourceLocation?)?
    private(set) var options = SSHHostOptions()
    /// `CanonicalizeHostname` and its companions, applied between the two passes.
    private(set) var canonicalization = SSHCanonicalization()
    /// The keywords that have a value: a bit per `SSHOption` case, and the unjudged keywords.
    private var seen: UInt32 = 0
    private var seenUnjudged: [String] = []

    /// Who gave a setting: only the user's own configuration may name a command fleettrust runs.
    enum Origin {
        /// An inventory: an ssh_config inventory, Ansible's `-o` arguments.
        case inventory
        /// The user's own ssh configuration (`--ssh-config`, `~/.ssh/config`, `/etc/ssh/ssh_config`).
        case userConfiguration
    }

    /// Applies one setting unless the keyword already has a value.
    mutating func apply(_ option: SSHOption, at location: SourceLocation?, from origin: Origin = .inventory) {
        if case .unjudged(let keyword, _) = option {
            guard !seenUnjudged.contains(keyword) else { return }
            seenUnjudged.append(keyword)
        } else {
            let bit: UInt32 = 1 << option.ordinal
            guard seen & bit == 0 else { return }
            seen |= bit
        }
        switch option {
        case .hostName(let value): hostName = value
        case .port(let value): port = value
        case .user(let value): user = value
        case .hostKeyAlias(let value): hostKeyAlias = value
        case .userKnownHostsFiles(let files): userFiles = (files, location)
        case .globalKnownHostsFiles(let files): globalFiles = (files, location)
        case .hostKeyAlgorithms(let list): options.hostKeyAlgorithms = list
        case .caSignatureAlgorithms(let list): options.caSignatureAlgorithms = list
        case .kexAlgorithms(let list): options.kexAlgorithms = list
        case .ciphers(let list): options.ciphers = list
        case .macs(let list): options.macs = list
        case .requiredRSASize(let bits): options.requiredRSASize = bits
        case .checkHostIP(let flag): options.checkHostIP = flag
        case .hashKnownHosts(let flag): options.hashKnownHosts = flag
        case .revokedHostKeys(let files): options.revokedHostKeys = files
        case .proxy(let value):
            proxy = .some(value)
            proxyOrigin = origin
        case .knownHostsCommand(let command): knownHostsCommand = command.map { ($0, location, origin) }
        case .fingerprintHash(let name): options.fingerprintHash = name
        case .noHostAuthenticationForLocalhost(let flag): options.noHostAuthenticationForLocalhost = flag
        case .verifyHostKeyDNS(let mode): options.verifyHostKeyDNS = mode
        case .addressFamily(let family): options.addressFamily = family
        case .canonicalizeHostname(let mode): canonicalization.mode = mode
        case .canonicalDomains(let domains): canonicalization.domains = domains
        case .canonicalizeMaxDots(let dots): canonicalization.maxDots = dots
        case .canonicalizeFallbackLocal(let flag): canonicalization.fallbackLocal = flag
        case .canonicalizePermittedCNAMEs(let rules): canonicalization.permittedCNAMEs = rules
        case .unjudged(let keyword, let why):
            if let why { addUnjudged(UnjudgedSetting(keyword: keyword, location: location, why: why)) }
        }
    }

    /// Before the final pass `ssh` makes the (canonical) host name its `HostName`: later
    /// `HostName` lines no longer count.
    mutating func takeFinalHostName(_ name: String) {
        hostName = name
        seen |= 1 << SSHOption.hostName("").ordinal
    }

    /// Whether `ssh` connects itself rather than through a ProxyCommand or ProxyJump, as
    /// `resolve_canonicalize` decides it: `ProxyJump none` is not yet cleared there.
    var isDirect: Bool { (proxy ?? nil) == nil }

    /// As `ssh` decides it for the bare name's CNAME (`option_clear_or_none`): `ProxyJump none` is direct.
    var isDirectOnceNoneCleared: Bool { isDirect || (proxy ?? nil)?.lowercased() == "proxyjump none" }

    /// Records a setting that may be in force and that fleettrust cannot judge under.
    /// The final pass meets the same block again: it is named once.
    mutating func addUnjudged(_ setting: UnjudgedSetting) {
        guard options.unjudged?.contains(setting) != true else { return }
        options.unjudged = (options.unjudged ?? []) + [setting]
    }

    /// Where `ssh hostArgument` connects (`HostName` with `%h` expanded, else the argument).
    func address(hostArgument: String) -> String {
        hostName.map { SSHConfigTokens.expand($0, ["h": hostArgument]) } ?? hostArgument
    }

    /// The host as `ssh hostArgument` reaches and judges it: `UserKnownHostsFile` with `~`,
    /// `${VAR}` and `%` tokens expanded (`%k` is the lowercased `HostKeyAlias`, else the
    /// argument), `GlobalKnownHostsFile` with `~` only, as `ssh` 9.2 does; `none` means no file.
    /// A value `ssh` would stop on makes the host unjudged instead.
    func host(named name: String, hostArgument: String, address: String, port: Int, user: String?,
              options readOptions: InventoryReadOptions, environment: [String: String]? = nil)
        -> InventoryHost {
        var settings = self
        if let (command, location, origin) = knownHostsCommand {
            switch origin {
            case .userConfiguration:
                settings.options.knownHostsCommand = KnownHostsCommand(template: command, location: location, hostArgument: hostArgument)
            case .inventory:
                settings.addUnjudged(UnjudgedSetting(keyword: "KnownHostsCommand", location: location,
                                                     why: "the inventory sets it, and fleettrust never runs a command an inventory names"))
            }
        }
        var userKnownHostsFiles: [String] = []
        if let (files, location) = userFiles {
            let values = SSHConfigTokens.knownHostsValues(alias: hostArgument, hostName: address.lowercased(), port: port,
                                                          user: user, hostKeyAlias: hostKeyAlias, options: readOptions)
            switch Self.noneOrFiles(files) {
            case nil:
                settings.addUnjudged(UnjudgedSetting(keyword: "UserKnownHostsFile", location: location, why: "ssh refuses \"none\" beside other files"))
            case .some(nil):
                settings.options.noUserKnownHostsFile = true
            case .some(.some(let list)):
                do {
                    userKnownHostsFiles = try list.map { file throws(SSHConfigTokens.ExpansionFailure) in
                        try SSHConfigTokens.dollarPercentExpanded(SSHConfigTokens.tildeExpanded(file, home: readOptions.homeDirectory),
                                                                  values, environment: environment ?? ProcessInfo.processInfo.environment)
                    }
                } catch {
                    settings.addUnjudged(UnjudgedSetting(keyword: "UserKnownHostsFile", location: location,
                                                         why: "ssh stops on it (\(error.text))"))
                }
            }
        }
        if let (files, location) = globalFiles {
            switch Self.noneOrFiles(files) {
            case nil:
                settings.addUnjudged(UnjudgedSetting(keyword: "GlobalKnownHostsFile", location: location, why: "ssh refuses \"none\" beside other files"))
            case .some(nil):
                settings.options.globalKnownHostsFiles = []
            case .some(.some(let list)):
                do {
                    settings.options.globalKnownHostsFiles = try list.map { file throws(SSHConfigTokens.ExpansionFailure) in
                        try SSHConfigTokens.tildeExpanded(file, home: readOptions.homeDirectory)
                    }
                } catch {
                    settings.addUnjudged(UnjudgedSetting(keyword: "GlobalKnownHostsFile", location: location,
                                                         why: "ssh stops on it (\(error.text))"))
                }
            }
        }
        var host = InventoryHost(name: name, address: address, port: port, user: user, hostKeyAlias: hostKeyAlias,
                                 userKnownHostsFiles: userKnownHostsFiles, routing: HostRoute.parse(proxy ?? nil), sshOptions: settings.options)
        host.proxyCommandNotAllowed = proxyOrigin == .inventory && !readOptions.allowInventoryProxyCommands
        return host
    }

    /// `none` first and alone: no file (`.some(nil)`); `none` with others: nil (`ssh` refuses).
    private static func noneOrFiles(_ files: [String]) -> [String]?? {
        guard files.first?.lowercased() == "none" else { return .some(files) }
        return files.count == 1 ? .some(nil) : nil
    }
}
