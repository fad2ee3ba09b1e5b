/// One ssh_config keyword with its value parsed: the one keyword table that the ssh_config reader
/// and Ansible's `-o` arguments share, as OpenSSH's `readconf.c` has one table for its files and
/// its command line.
///
/// Every keyword OpenSSH 9.2 knows is in the table. Those that change the host-key decision parse
/// to a typed value here (a bad value is an error at read time, with the line), and a host that
/// gets one fleettrust cannot judge exactly is judged `unchecked` with the keyword and its line
/// (`unjudged`). The rest (ciphers, forwarding, authentication…) do not change which key `ssh`
/// accepts and are read and ignored, as `ssh` reads and ignores them for that decision.
/// Adding a keyword is one case here, one arm in `parse`, one field in `SSHHostOptions`.
enum SSHOption: Hashable, Sendable {
    case hostName(String)
    case port(Int)
    case user(String)
    case hostKeyAlias(String)
    /// `UserKnownHostsFile` / `GlobalKnownHostsFile` as written (expanded per host, since their
    /// tokens name the host).
    case userKnownHostsFiles([String])
    case globalKnownHostsFiles([String])
    case hostKeyAlgorithms(SSHAlgorithmList)
    case caSignatureAlgorithms(SSHAlgorithmList)
    case requiredRSASize(Int)
    case checkHostIP(Bool)
    case hashKnownHosts(Bool)
    /// `RevokedHostKeys`: the file as written (`ssh` 9.2 expands nothing in it); empty for `none`.
    case revokedHostKeys([String])
    /// `ProxyJump` or `ProxyCommand` (whichever comes first wins, as in `ssh`); nil for `none`.
    case proxy(String?)
    /// `KnownHostsCommand`: the rest of the line as written (`ssh` splits it itself, per run);
    /// nil for `none`. Run only when it comes from the user's own configuration.
    case knownHostsCommand(String?)
    /// `FingerprintHash`, as OpenSSH names the digest (`MD5`, `SHA256`…): the `%f` a
    /// `KnownHostsCommand` is given.
    case fingerprintHash(String)
    /// `NoHostAuthenticationForLocalhost`: `ssh` accepts any key from a loopback peer it reached
    /// directly, unless `HostKeyAlias` is set.
    case noHostAuthenticationForLocalhost(Bool)
    /// `CanonicalizeHostname` and its companions (`SSHCanonicalization`).
    case canonicalizeHostname(SSHCanonicalization.Mode)
    case canonicalDomains([String])
    case canonicalizeMaxDots(Int)
    case canonicalizeFallbackLocal(Bool)
    case canonicalizePermittedCNAMEs([SSHCanonicalization.CNAMERule])
    /// `VerifyHostKeyDNS`: whether `ssh` reads SSHFP records for the host name, and whether a
    /// validated match accepts the key (`yes`) or only informs (`ask`).
    case verifyHostKeyDNS(SSHFPMode)
    /// A setting that changes `ssh`'s decision in a way fleettrust does not reproduce; `why` is
    /// nil for a value that turns it off (`none`, `no`), which still wins over later lines.
    case unjudged(keyword: String, why: String?)

    /// The case's place in the table (0 to 22), for a bit set of the keywords that have a value.
    var ordinal: Int {
        switch self {
        case .hostName: return 0
        case .port: return 1
        case .user: return 2
        case .hostKeyAlias: return 3
        case .userKnownHostsFiles: return 4
        case .globalKnownHostsFiles: return 5
        case .hostKeyAlgorithms: return 6
        case .caSignatureAlgorithms: return 7
        case .requiredRSASize: return 8
        case .checkHostIP: return 9
        case .hashKnownHosts: return 10
        case .revokedHostKeys: return 11
        case .proxy: return 12
        case .knownHostsCommand: return 13
        case .fingerprintHash: return 14
        case .unjudged: return 15
        case .noHostAuthenticationForLocalhost: return 16
        case .canonicalizeHostname: return 17
        case .canonicalDomains: return 18
        case .canonicalizeMaxDots: return 19
        case .canonicalizeFallbackLocal: return 20
        case .canonicalizePermittedCNAMEs: return 21
        case .verifyHostKeyDNS: return 22
        }
    }

    /// What reading one keyword gave.
    enum Reading: Equatable {
        case option(SSHOption)
        /// A keyword `ssh` knows that does not change which host key it accepts.
        case noEffect
        /// A keyword OpenSSH 9.2 does not know: `ssh` refuses the configuration ("Bad
        /// configuration option") unless `IgnoreUnknown` names it.
        case unknown
    }

    /// Keywords that take one argument: `ssh` ignores the rest of the line with a complaint.
    static let singleArgument: Set<String> = [
        "hostname", "port", "user", "hostkeyalias", "hostkeyalgorithms", "casignaturealgorithms", "requiredrsasize",
        "checkhostip", "hashknownhosts", "proxyjump", "verifyhostkeydns", "nohostauthenticationforlocalhost",
        "canonicalizehostname", "stricthostkeychecking", "revokedhostkeys", "fingerprinthash",
        "canonicalizemaxdots", "canonicalizefallbacklocal",
    ]

    /// `process_config_line`'s arms for the keywords that matter, `keyword` lowercased;
    /// `rawArguments` is the rest of the line as written (a command keeps its quotes).
    static func parse(keyword: String, arguments: [String], rawArguments: String) -> Result<Reading, SSHOptionProblem> {
        let name = spelling(keyword)
        guard let first = arguments.first else { return .failure(.invalid("\(name) has no argument")) }
        func option(_ value: SSHOption) -> Result<Reading, SSHOptionProblem> { .success(.option(value)) }
        func flag(_ make: (Bool) -> SSHOption) -> Result<Reading, SSHOptionProblem> {
            guard let value = Self.flag(first) else { return .failure(.invalid("\(name): \(InventoryDiagnostic.quote(first)) is not yes or no")) }
            return option(make(value))
        }
        func unjudged(_ why: String, unless inert: Set<String>) -> Result<Reading, SSHOptionProblem> {
            option(.unjudged(keyword: name, why: inert.contains(first.lowercased()) ? nil : why))
        }
        switch keyword {
        case "hostname":
            guard SSHConfigTokens.unknownToken(in: first, allowed: ["h", "%"]) == nil else {
                return .failure(.invalid("HostName \(InventoryDiagnostic.quote(first)) has an unknown or unsupported % token"))
            }
            return option(.hostName(first))
        case "port":
            switch HostPattern.port(first) {
            case .success(let port): return option(.port(port))
            case .failure(let error): return .failure(.invalid("Port: \(error.text)"))
            }
        case "user": return option(.user(first))
        case "hostkeyalias": return option(.hostKeyAlias(first))
        case "userknownhostsfile", "globalknownhostsfile":
            let user = keyword == "userknownhostsfile"
            for file in arguments where user {
                if SSHConfigTokens.unknownToken(in: file, allowed: SSHConfigTokens.knownHostsTokens) != nil {
                    return .failure(.invalid("\(name) \(InventoryDiagnostic.quote(file)) has an unknown or unsupported % token"))
                }
            }
            return option(user ? .userKnownHostsFiles(arguments) : .globalKnownHostsFiles(arguments))
        case "hostkeyalgorithms", "casignaturealgorithms":
            let host = keyword == "hostkeyalgorithms"
            return SSHAlgorithmList.parse(first, known: host ? HostKeyAlgorithms.openSSHKnown : CertificateAcceptance.knownSignatureAlgorithms)
                .map { .option(host ? .hostKeyAlgorithms($0) : .caSignatureAlgorithms($0)) }
                .mapError { .invalid("\(name) \(InventoryDiagnostic.quote(first)) \($0.text)") }
        case "requiredrsasize":
            guard let bits = Int(first), bits >= 0, first.allSatisfy(\.isASCII) else {
                return .failure(.invalid("RequiredRSASize \(InventoryDiagnostic.quote(first)) is not a whole number of bits"))
            }
            return option(.requiredRSASize(bits))
        case "checkhostip": return flag(SSHOption.checkHostIP)
        case "hashknownhosts": return flag(SSHOption.hashKnownHosts)
        case "revokedhostkeys": return option(.revokedHostKeys(first.lowercased() == "none" ? [] : [first]))
        case "proxyjump", "proxycommand":
            let spelled = keyword == "proxyjump" ? "ProxyJump" : "ProxyCommand"
            let value = keyword == "proxyjump" ? first : rawArguments
            return option(.proxy(arguments.count == 1 && first.lowercased() == "none" ? nil : spelled + " " + value))
        case "knownhostscommand":
            // `parse_command` takes the rest of the line; `CLEAR_ON_NONE` compares all of it.
            return option(.knownHostsCommand(rawArguments.lowercased() == "none" ? nil : rawArguments))
        case "fingerprinthash":
            // `ssh_digest_alg_by_name`: the names OpenSSH's digests have, in any case.
            guard let name = ["MD5", "SHA1", "SHA256", "SHA384", "SHA512"].first(where: { $0 == first.uppercased() }) else {
                return .failure(.invalid("FingerprintHash: invalid hash algorithm \(InventoryDiagnostic.quote(first))"))
            }
            return option(.fingerprintHash(name))
        case "canonicalizehostname":
            switch first.lowercased() {
            case "yes", "true": return option(.canonicalizeHostname(.yes))
            case "no", "false": return option(.canonicalizeHostname(.no))
            case "always": return option(.canonicalizeHostname(.always))
            default: return .failure(.invalid("CanonicalizeHostname: \(InventoryDiagnostic.quote(first)) is not yes, no or always"))
            }
        case "canonicaldomains":
            // `valid_domain(…, makelower=1)`: letters, digits, `-` and `.`, not starting with one of the last two.
            if let bad = arguments.first(where: { !$0.isEmpty && !Self.validDomain($0) }) {
                return .failure(.invalid("CanonicalDomains \(InventoryDiagnostic.quote(bad)) is not a domain name"))
            }
            return option(.canonicalDomains(arguments.map { $0.lowercased() }))
        case "canonicalizemaxdots":
            guard let dots = Int(first), dots >= 0, first.allSatisfy(\.isASCII) else {
                return .failure(.invalid("CanonicalizeMaxDots \(InventoryDiagnostic.quote(first)) is not a whole number"))
            }
            return option(.canonicalizeMaxDots(dots))
        case "canonicalizefallbacklocal": return flag(SSHOption.canonicalizeFallbackLocal)
        case "canonicalizepermittedcnames":
            return SSHCanonicalization.rules(arguments).map { .option(.canonicalizePermittedCNAMEs($0)) }
        case "verifyhostkeydns":
            guard let mode = SSHFPMode(keyword: first) else {
                return .failure(.invalid("VerifyHostKeyDNS: \(InventoryDiagnostic.quote(first)) is not yes, no or ask"))
            }
            return option(.verifyHostKeyDNS(mode))
        case "nohostauthenticationforlocalhost": return flag(SSHOption.noHostAuthenticationForLocalhost)
        default:
            return .success(noEffect.contains(keyword) ? .noEffect : .unknown)
        }
    }

    /// `valid_domain`: a domain `CanonicalDomains` accepts (`none` among them).
    static func validDomain(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first != "-", first != "." else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == ".") }
    }

    /// `yes`/`no` (and the `true`/`false` ssh also takes), as `ssh`'s flag options read them.
    static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true": return true
        case "no", "false": return false
        default: return nil
        }
    }

    /// The keyword as `ssh_config(5)` spells it.
    static func spelling(_ keyword: String) -> String {
        [
            "hostname": "HostName", "port": "Port", "user": "User", "hostkeyalias": "HostKeyAlias",
            "userknownhostsfile": "UserKnownHostsFile", "globalknownhostsfile": "GlobalKnownHostsFile",
            "hostkeyalgorithms": "HostKeyAlgorithms", "casignaturealgorithms": "CASignatureAlgorithms",
            "requiredrsasize": "RequiredRSASize", "checkhostip": "CheckHostIP", "hashknownhosts": "HashKnownHosts",
            "revokedhostkeys": "RevokedHostKeys", "proxyjump": "ProxyJump", "proxycommand": "ProxyCommand",
            "knownhostscommand": "KnownHostsCommand", "canonicalizehostname": "CanonicalizeHostname",
            "verifyhostkeydns": "VerifyHostKeyDNS", "canonicaldomains": "CanonicalDomains",
            "canonicalizemaxdots": "CanonicalizeMaxDots", "canonicalizefallbacklocal": "CanonicalizeFallbackLocal",
            "canonicalizepermittedcnames": "CanonicalizePermittedCNAMEs", "fingerprinthash": "FingerprintHash", "nohostauthenticationforlocalhost": "NoHostAuthenticationForLocalhost",
        ][keyword] ?? keyword
    }

    /// The rest of OpenSSH 9.2's `readconf.c` keyword table. `StrictHostKeyChecking` is here
    /// because fleettrust always judges as `StrictHostKeyChecking=yes`; `UpdateHostKeys` acts
    /// after the decision; `Host`, `Match` and `Include` are the reader's.
    static let noEffect: Set<String> = [
        "protocol", "cipher", "fallbacktorsh", "globalknownhostsfile2", "rhostsauthentication", "userknownhostsfile2",
        "useroaming", "usersh", "useprivilegedport", "afstokenpassing", "kerberosauthentication", "kerberostgtpassing",
        "rsaauthentication", "rhostsrsaauthentication", "compressionlevel", "gssapiauthentication",
        "gssapidelegatecredentials", "pkcs11provider", "smartcarddevice", "forwardagent", "forwardx11",
        "forwardx11trusted", "forwardx11timeout", "exitonforwardfailure", "xauthlocation", "gatewayports",
        "passwordauthentication", "kbdinteractiveauthentication", "kbdinteractivedevices",
        "challengeresponseauthentication", "skeyauthentication", "tisauthentication", "pubkeyauthentication",
        "dsaauthentication", "hostbasedauthentication", "identityfile", "identityfile2", "identitiesonly",
        "certificatefile", "addkeystoagent", "identityagent", "ciphers", "macs", "remoteforward", "localforward",
        "permitremoteopen", "host", "match", "escapechar", "connectionattempts", "batchmode", "stricthostkeychecking",
        "compression", "tcpkeepalive", "keepalive", "numberofpasswordprompts", "syslogfacility", "loglevel",
        "logverbose", "dynamicforward", "preferredauthentications", "bindaddress", "bindinterface",
        "clearallforwardings", "enablesshkeysign", "rekeylimit", "connecttimeout", "addressfamily",
        "serveraliveinterval", "serveralivecountmax", "sendenv", "setenv", "controlpath", "controlmaster",
        "controlpersist", "include", "tunnel", "tunneldevice", "localcommand", "permitlocalcommand", "remotecommand",
        "visualhostkey", "kexalgorithms", "ipqos", "requesttty", "sessiontype", "stdinnull", "forkafterauthentication",
        "proxyusefdpass", "streamlocalbindmask", "streamlocalbindunlink",
        "updatehostkeys", "hostbasedacceptedalgorithms", "hostbasedkeytypes", "pubkeyacceptedalgorithms",
        "pubkeyacceptedkeytypes", "ignoreunknown", "securitykeyprovider", "enableescapecommandline",
    ]
}

/// Why a keyword's value cannot be used: one clause for a `file:line` message.
public enum SSHOptionProblem: Error, Hashable, Sendable {
    case invalid(String)

    public var text: String {
        switch self {
        case .invalid(let text): return text
        }
    }
}
