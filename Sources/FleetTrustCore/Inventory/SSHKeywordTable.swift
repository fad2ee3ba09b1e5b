/// OpenSSH 9.2's client keywords as one array of rows, the way `readconf.c` keeps them
/// (`keywords[]`, then one arm of `process_config_line` each): the keyword, how many arguments
/// `ssh` reads, and what it means for the host-key decision. The ssh_config reader, the user's
/// own configuration and Ansible's `-o` arguments all read through it (`SSHOption.parse`).
///
/// Adding a keyword that changes the decision is one row here, one `SSHOption` case, one field in
/// `SSHHostOptions`; one fleettrust cannot reproduce is one `notJudged` row with the reason.
struct SSHKeyword: Sendable {
    /// The keyword as `ssh_config(5)` spells it; lower-cased it is the table's key.
    var name: String
    var arity: Arity
    var effect: Effect

    enum Arity: Sendable {
        /// One argument: `ssh` refuses the configuration when more follow ("extra arguments at end of line").
        case one
        /// A list, or the rest of the line.
        case many
    }

    /// What a line with the keyword gives, once `ssh` has the arguments.
    enum Effect: Sendable {
        /// A typed value (a bad one is the problem `ssh` refuses the configuration for).
        case judged(@Sendable (Line) -> Result<SSHOption, SSHOptionProblem>)
        /// Changes `ssh`'s decision in a way fleettrust does not reproduce; the host is unchecked
        /// with `why`, unless the value is one of `inert` (lower-cased), which turns it off.
        case notJudged(why: String, inert: Set<String>)
        /// Read by the ssh_config reader itself (`Host`, `Match`, `Include`); `ssh` refuses it
        /// as a command-line option.
        case reader
        /// Does not change which host key `ssh` accepts.
        case noEffect
    }

    /// One line's arguments: `first` is there (a line without one is refused before).
    struct Line {
        var name: String
        var first: String
        var arguments: [String]
        /// The rest of the line as written (a command keeps its quotes).
        var raw: String
    }

    /// The rows by lower-cased keyword.
    static let byKeyword: [String: SSHKeyword] = Dictionary(uniqueKeysWithValues: table.map { ($0.name.lowercased(), $0) })

    static func judged(_ name: String, _ arity: Arity, _ parse: @escaping @Sendable (Line) -> Result<SSHOption, SSHOptionProblem>) -> SSHKeyword {
        SSHKeyword(name: name, arity: arity, effect: .judged(parse))
    }

    /// A `yes`/`no` keyword.
    static func flag(_ name: String, _ make: @escaping @Sendable (Bool) -> SSHOption) -> SSHKeyword {
        judged(name, .one) { line in
            guard let value = SSHOption.flag(line.first) else {
                return .failure(.invalid("\(line.name): \(InventoryDiagnostic.quote(line.first)) is not yes or no"))
            }
            return .success(make(value))
        }
    }

    static let table: [SSHKeyword] = judgedRows + [
        SSHKeyword(name: "Host", arity: .many, effect: .reader),
        SSHKeyword(name: "Match", arity: .many, effect: .reader),
        SSHKeyword(name: "Include", arity: .many, effect: .reader),
        // `StrictHostKeyChecking` has no effect because fleettrust always judges as
        // `StrictHostKeyChecking=yes`; `UpdateHostKeys` acts after the decision.
        SSHKeyword(name: "stricthostkeychecking", arity: .one, effect: .noEffect),
    ] + noEffectRows

    /// The keywords that change the decision, each with its arm of `process_config_line`.
    private static let judgedRows: [SSHKeyword] = [
        judged("HostName", .one) { line in
            guard SSHConfigTokens.unknownToken(in: line.first, allowed: ["h", "%"]) == nil else {
                return .failure(.invalid("HostName \(InventoryDiagnostic.quote(line.first)) has an unknown or unsupported % token"))
            }
            return .success(.hostName(line.first))
        },
        judged("Port", .one) { line in
            HostPattern.port(line.first).map(SSHOption.port).mapError { .invalid("Port: \($0.text)") }
        },
        judged("User", .one) { .success(.user($0.first)) },
        judged("HostKeyAlias", .one) { .success(.hostKeyAlias($0.first)) },
        judged("UserKnownHostsFile", .many) { line in
            if let file = line.arguments.first(where: { SSHConfigTokens.unknownToken(in: $0, allowed: SSHConfigTokens.knownHostsTokens) != nil }) {
                return .failure(.invalid("\(line.name) \(InventoryDiagnostic.quote(file)) has an unknown or unsupported % token"))
            }
            return .success(.userKnownHostsFiles(line.arguments))
        },
        judged("GlobalKnownHostsFile", .many) { .success(.globalKnownHostsFiles($0.arguments)) },
        judged("HostKeyAlgorithms", .one) { algorithms($0, known: HostKeyAlgorithms.openSSHKnown, SSHOption.hostKeyAlgorithms) },
        judged("CASignatureAlgorithms", .one) {
            algorithms($0, known: CertificateAcceptance.knownSignatureAlgorithms, SSHOption.caSignatureAlgorithms)
        },
        judged("KexAlgorithms", .one) { line in
            SSHAlgorithmList.parse(line.first, known: KeyExchangeAlgorithms.openSSHKnown, patterns: false)
                .map(SSHOption.kexAlgorithms).mapError { .invalid("KexAlgorithms \(InventoryDiagnostic.quote(line.first)) \($0.text)") }
        },
        judged("Ciphers", .one) { line in
            SSHAlgorithmList.parse(line.first, known: TransportAlgorithms.openSSHKnownCiphers, patterns: false)
                .map(SSHOption.ciphers).mapError { .invalid("Ciphers \(InventoryDiagnostic.quote(line.first)) \($0.text)") }
        },
        judged("MACs", .one) { line in
            SSHAlgorithmList.parse(line.first, known: TransportAlgorithms.openSSHKnownMACs, patterns: false)
                .map(SSHOption.macs).mapError { .invalid("MACs \(InventoryDiagnostic.quote(line.first)) \($0.text)") }
        },
        judged("VerifyHostKeyDNS", .one) { line in
            guard let mode = SSHFPMode(keyword: line.first) else {
                return .failure(.invalid("VerifyHostKeyDNS: \(InventoryDiagnostic.quote(line.first)) is not yes, no or ask"))
            }
            return .success(.verifyHostKeyDNS(mode))
        },
        judged("AddressFamily", .one) { line in
            guard let family = SSHAddressFamily(keyword: line.first) else {
                return .failure(.invalid("AddressFamily: \(InventoryDiagnostic.quote(line.first)) is not any, inet or inet6"))
            }
            return .success(.addressFamily(family))
        },
        judged("RequiredRSASize", .one) { line in
            guard let bits = Int(line.first), bits >= 0, line.first.allSatisfy(\.isASCII) else {
                return .failure(.invalid("RequiredRSASize \(InventoryDiagnostic.quote(line.first)) is not a whole number of bits"))
            }
            return .success(.requiredRSASize(bits))
        },
        flag("CheckHostIP", SSHOption.checkHostIP),
        flag("HashKnownHosts", SSHOption.hashKnownHosts),
        judged("RevokedHostKeys", .one) { .success(.revokedHostKeys($0.first.lowercased() == "none" ? [] : [$0.first])) },
        // `ProxyJump` takes one word (ssh ignores any after it without a word), `ProxyCommand` the
        // rest of the line; `none` turns either off (`ProxyJump none` only once `ssh` has chosen
        // whether to canonicalize: it stays as written, and its route is direct).
        judged("ProxyJump", .many) { .success(.proxy("ProxyJump " + $0.first)) },
        judged("ProxyCommand", .many) { line in
            .success(.proxy(line.arguments.count == 1 && line.first.lowercased() == "none" ? nil : "ProxyCommand " + line.raw))
        },
        // `parse_command` takes the rest of the line; `CLEAR_ON_NONE` compares all of it.
        judged("KnownHostsCommand", .many) { .success(.knownHostsCommand($0.raw.lowercased() == "none" ? nil : $0.raw)) },
        judged("FingerprintHash", .one) { line in
            // `ssh_digest_alg_by_name`: the names OpenSSH's digests have, in any case.
            guard let name = ["MD5", "SHA1", "SHA256", "SHA384", "SHA512"].first(where: { $0 == line.first.uppercased() }) else {
                return .failure(.invalid("FingerprintHash: invalid hash algorithm \(InventoryDiagnostic.quote(line.first))"))
            }
            return .success(.fingerprintHash(name))
        },
        judged("CanonicalizeHostname", .one) { line in
            switch line.first.lowercased() {
            case "yes", "true": return .success(.canonicalizeHostname(.yes))
            case "no", "false": return .success(.canonicalizeHostname(.no))
            case "always": return .success(.canonicalizeHostname(.always))
            default: return .failure(.invalid("CanonicalizeHostname: \(InventoryDiagnostic.quote(line.first)) is not yes, no or always"))
            }
        },
        judged("CanonicalDomains", .many) { line in
            // `none` only alone; each other domain through `valid_domain`, which `none` passes too.
            if line.arguments.count > 1, line.arguments.contains(where: { $0.lowercased() == "none" }) {
                return .failure(.invalid("CanonicalDomains \"none\" argument must appear alone"))
            }
            var domains: [String] = []
            for argument in line.arguments {
                switch SSHOption.validDomain(argument) {
                case .success(let domain): domains.append(domain)
                case .failure(let problem): return .failure(problem)
                }
            }
            return .success(.canonicalDomains(domains))
        },
        judged("CanonicalizeMaxDots", .one) { line in
            guard let dots = Int(line.first), dots >= 0, line.first.allSatisfy(\.isASCII) else {
                return .failure(.invalid("CanonicalizeMaxDots \(InventoryDiagnostic.quote(line.first)) is not a whole number"))
            }
            return .success(.canonicalizeMaxDots(dots))
        },
        flag("CanonicalizeFallbackLocal", SSHOption.canonicalizeFallbackLocal),
        judged("CanonicalizePermittedCNAMEs", .many) { SSHCanonicalization.rules($0.arguments).map(SSHOption.canonicalizePermittedCNAMEs) },
        flag("NoHostAuthenticationForLocalhost", SSHOption.noHostAuthenticationForLocalhost),
    ]

    private static func algorithms(_ line: Line, known: [String], _ make: (SSHAlgorithmList) -> SSHOption) -> Result<SSHOption, SSHOptionProblem> {
        SSHAlgorithmList.parse(line.first, known: known).map(make).mapError { .invalid("\(line.name) \(InventoryDiagnostic.quote(line.first)) \($0.text)") }
    }

    /// The rest of `readconf.c`'s table, as it spells them.
    private static let noEffectRows: [SSHKeyword] = [
        "protocol", "cipher", "fallbacktorsh", "globalknownhostsfile2", "rhostsauthentication", "userknownhostsfile2",
        "useroaming", "usersh", "useprivilegedport", "afstokenpassing", "kerberosauthentication", "kerberostgtpassing",
        "rsaauthentication", "rhostsrsaauthentication", "compressionlevel", "gssapiauthentication",
        "gssapidelegatecredentials", "pkcs11provider", "smartcarddevice", "forwardagent", "forwardx11",
        "forwardx11trusted", "forwardx11timeout", "exitonforwardfailure", "xauthlocation", "gatewayports",
        "passwordauthentication", "kbdinteractiveauthentication", "kbdinteractivedevices",
        "challengeresponseauthentication", "skeyauthentication", "tisauthentication", "pubkeyauthentication",
        "dsaauthentication", "hostbasedauthentication", "identityfile", "identityfile2", "identitiesonly",
        "certificatefile", "addkeystoagent", "identityagent", "remoteforward", "localforward",
        "permitremoteopen", "escapechar", "connectionattempts", "batchmode",
        "compression", "tcpkeepalive", "keepalive", "numberofpasswordprompts", "syslogfacility", "loglevel",
        "logverbose", "dynamicforward", "preferredauthentications", "bindaddress", "bindinterface",
        "clearallforwardings", "enablesshkeysign", "rekeylimit", "connecttimeout",
        "serveraliveinterval", "serveralivecountmax", "sendenv", "setenv", "controlpath", "controlmaster",
        "controlpersist", "tunnel", "tunneldevice", "localcommand", "permitlocalcommand", "remotecommand",
        "visualhostkey", "ipqos", "requesttty", "sessiontype", "stdinnull", "forkafterauthentication",
        "proxyusefdpass", "streamlocalbindmask", "streamlocalbindunlink",
        "updatehostkeys", "hostbasedacceptedalgorithms", "hostbasedkeytypes", "pubkeyacceptedalgorithms",
        "pubkeyacceptedkeytypes", "ignoreunknown", "securitykeyprovider", "enableescapecommandline",
    ].map { SSHKeyword(name: $0, arity: .many, effect: .noEffect) }
}
