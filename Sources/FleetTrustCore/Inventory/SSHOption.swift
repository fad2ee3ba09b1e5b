/// One ssh_config keyword with its value parsed: the one keyword table that the ssh_config reader
/// and Ansible's `-o` arguments share, as OpenSSH's `readconf.c` has one table for its files and
/// its command line.
///
/// Every keyword OpenSSH 9.2 knows is in the table. Those that change the host-key decision parse
/// to a typed value here (a bad value is an error at read time, with the line), and a host that
/// gets one fleettrust cannot judge exactly is judged `unchecked` with the keyword and its line
/// (`unjudged`). The rest (ciphers, forwarding, authentication…) do not change which key `ssh`
/// accepts and are read and ignored, as `ssh` reads and ignores them for that decision; `Ciphers`
/// and `MACs` are kept, because they shape the KEXINIT a server or relay sees.
/// Adding a keyword is one case here, one row in the table (`SSHKeyword`), one field in
/// `SSHHostOptions`.
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
    /// `KexAlgorithms`: the key exchanges `ssh` offers (replace, `+`, `-`, `^` as in ssh 9.2).
    case kexAlgorithms(SSHAlgorithmList)
    /// `Ciphers` and `MACs`: what `ssh`'s KEXINIT lists after the host-key algorithms, so the
    /// probe's connection shaped like `ssh`'s lists the same, and fails to agree where `ssh` fails.
    case ciphers(SSHAlgorithmList)
    case macs(SSHAlgorithmList)
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
    /// `VerifyHostKeyDNS`: whether `ssh` reads SSHFP records, and whether a validated match accepts.
    case verifyHostKeyDNS(SSHFPMode)
    /// `AddressFamily`: the family of the addresses `ssh` looks up and connects to.
    case addressFamily(SSHAddressFamily)
    /// A setting that changes `ssh`'s decision in a way fleettrust does not reproduce; `why` is
    /// nil for a value that turns it off (`none`, `no`), which still wins over later lines.
    case unjudged(keyword: String, why: String?)

    /// The case's place in the table (0 to 26), for a bit set of the keywords that have a value.
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
        case .kexAlgorithms: return 23
        case .addressFamily: return 24
        case .ciphers: return 25
        case .macs: return 26
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

    /// `process_config_line` for one keyword (any case) through the table (`SSHKeyword`);
    /// `rawArguments` is the rest of the line as written (a command keeps its quotes).
    static func parse(keyword: String, arguments: [String], rawArguments: String) -> Result<Reading, SSHOptionProblem> {
        let keyword = keyword.lowercased()
        let row = SSHKeyword.byKeyword[keyword]
        let name = spelling(keyword)
        guard let first = arguments.first else { return .failure(.invalid("\(name) has no argument")) }
        switch row?.effect {
        case nil: return .success(.unknown)
        case .noEffect: return .success(.noEffect)
        case .reader:
            return .success(.option(.unjudged(keyword: name, why: "ssh refuses \(name) as a command-line option")))
        case .notJudged(let why, let inert):
            return .success(.option(.unjudged(keyword: name, why: inert.contains(first.lowercased()) ? nil : why)))
        case .judged(let parse):
            return parse(SSHKeyword.Line(name: name, first: first, arguments: arguments, raw: rawArguments)).map { .option($0) }
        }
    }

    /// Whether `ssh` reads one argument for the keyword and complains about the rest.
    static func takesOneArgument(_ keyword: String) -> Bool {
        if case .one = SSHKeyword.byKeyword[keyword.lowercased()]?.arity { return true }
        return false
    }

    /// The keyword as `ssh_config(5)` spells it (as written when the table does not know it).
    static func spelling(_ keyword: String) -> String {
        SSHKeyword.byKeyword[keyword.lowercased()]?.name ?? keyword
    }

    /// `valid_domain(name, makelower=1)`: a domain `CanonicalDomains` accepts, lower-cased and
    /// without a trailing dot as `ssh` keeps it, or `ssh`'s reason for stopping on it.
    static func validDomain(_ name: String) -> Result<String, SSHOptionProblem> {
        let domain = name.lowercased()
        guard let first = domain.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || ("0"..."9").contains(first) else {
            return .failure(.invalid("domain name \(InventoryDiagnostic.quote(name)) starts with invalid character"))
        }
        guard !domain.contains("..") else {
            return .failure(.invalid("domain name \(InventoryDiagnostic.quote(name)) contains consecutive separators"))
        }
        guard domain.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-._".unicodeScalars.contains($0)) }) else {
            return .failure(.invalid("domain name \(InventoryDiagnostic.quote(name)) contains invalid characters"))
        }
        return .success(domain.hasSuffix(".") ? String(domain.dropLast()) : domain)
    }

    /// `yes`/`no` (and the `true`/`false` ssh also takes), as `ssh`'s flag options read them.
    static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true": return true
        case "no", "false": return false
        default: return nil
        }
    }
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
