/// The name lookup `ssh` makes to canonicalize a host name (`getaddrinfo` with `AI_CANONNAME`),
/// defined here and done by a library that may use sockets: the core never resolves anything.
public protocol HostNameResolving: Sendable {
    /// Looks `name` up as `ssh`'s `resolve_host` does (a trailing dot kept, addresses of `family`
    /// only), bounded in time.
    func canonicalLookup(_ name: String, port: Int, family: SSHAddressFamily) -> HostNameLookup
}

/// What one canonicalizing lookup gave.
public enum HostNameLookup: Hashable, Sendable {
    /// The name resolves; `canonicalName` is the resolver's `ai_canonname` (a CNAME target, or the
    /// first name of an /etc/hosts line), when it gave one.
    case found(canonicalName: String?)
    /// The resolver says the name does not exist (or has no address).
    case notFound
    /// No answer `ssh` would have had the same way (a timeout, a resolver failure): nothing is claimed.
    case unanswered(String)
}

/// `CanonicalizeHostname` and its companions, as `ssh` 9.2's `resolve_canonicalize` and
/// `check_follow_cname` apply them to the host name after `HostName` (readconf.c defaults:
/// `CanonicalizeMaxDots 1`, `CanonicalizeFallbackLocal yes`, no domains, no CNAME rules).
struct SSHCanonicalization: Hashable, Sendable {
    enum Mode: Hashable, Sendable {
        case no, yes, always
    }

    /// One `CanonicalizePermittedCNAMEs` rule: a name matching `source` may become a CNAME matching `target`.
    struct CNAMERule: Hashable, Sendable {
        var source: String
        var target: String
    }

    var mode: Mode = .no
    var domains: [String] = []
    var maxDots = 1
    var fallbackLocal = true
    var permittedCNAMEs: [CNAMERule] = []
    /// `AddressFamily`: every lookup asks for addresses of that family only, so a name with none
    /// of them is not found.
    var family: SSHAddressFamily = .any

    /// What canonicalizing gave: the name `ssh` goes on with, or why it stops or cannot be followed.
    enum Outcome: Hashable, Sendable {
        case name(String)
        /// `resolve_canonicalize` found nothing and the name stays as it is (not an address, not
        /// asked, behind a proxy, too many dots, no domain found it): `ssh` may still follow the
        /// bare name's CNAME (`followingBareName`).
        case notCanonicalized
        /// `ssh` exits: `Could not resolve host "NAME"` (no domain found it and no fallback).
        case refused(String)
        case unanswered(String)
    }

    /// `resolve_canonicalize` for `host` (lowercased unless an address; numeric addresses are the
    /// caller's); `direct` is false behind a ProxyCommand or ProxyJump.
    func canonicalize(_ host: String, port: Int, direct: Bool, resolver: any HostNameResolving) -> Outcome {
        if LookupName.canonicalAddress(host) != nil { return .name(host) }
        guard mode != .no, direct || mode == .always, !host.isEmpty, !Self.looksLikeAddress(host) else { return .notCanonicalized }
        var candidates: [String] = []
        if host.hasSuffix(".") {
            candidates = [host]
        } else {
            guard host.filter({ $0 == "." }).count <= maxDots else { return .notCanonicalized }
            for domain in domains {
                if domain.lowercased() == "none" { break }
                candidates.append("\(host).\(domain).")
            }
        }
        for candidate in candidates {
            switch resolver.canonicalLookup(candidate, port: port, family: family) {
            case .notFound:
                continue
            case .unanswered(let why):
                return .unanswered("the lookup of \(candidate) gave no answer (\(why))")
            case .found(let canonicalName):
                let name = String(candidate.dropLast())
                return .name(followedCNAME(name, canonicalName ?? "", direct: direct) ?? name)
            }
        }
        return fallbackLocal ? .notCanonicalized : .refused("Could not resolve host \"\(host)\"")
    }

    /// ssh.c `main` after `resolve_canonicalize` found nothing: with `CanonicalizePermittedCNAMEs`
    /// set, the bare name is looked up with the resolver's own search rules and a permitted CNAME
    /// followed; `direct` is false behind a ProxyCommand or ProxyJump other than `none`. A name
    /// that does not resolve stays as it is (the probe then finds it unreachable, as `ssh` does).
    func followingBareName(_ host: String, port: Int, direct: Bool, resolver: any HostNameResolving) -> Outcome {
        guard mode != .no, !permittedCNAMEs.isEmpty, direct || mode == .always else { return .name(host) }
        switch resolver.canonicalLookup(host, port: port, family: family) {
        case .notFound: return .name(host)
        case .unanswered(let why): return .unanswered("the lookup of \(host) gave no answer (\(why))")
        case .found(let canonicalName): return .name(followedCNAME(host, canonicalName ?? "", direct: direct) ?? host)
        }
    }

    /// `check_follow_cname`: the CNAME replaces the name when a rule permits it; the rules are
    /// lower-cased, the CNAME is not (`match_pattern_list(cname, targets, 1)`). The resolver's
    /// canonical name loses its trailing dot first (`ssh` 9.2 on Debian matches and uses
    /// `real.example.test` where glibc answers `real.example.test.`; measured with `ssh -G`).
    private func followedCNAME(_ name: String, _ answer: String, direct: Bool) -> String? {
        let cname = answer.hasSuffix(".") ? String(answer.dropLast()) : answer
        guard !cname.isEmpty, !permittedCNAMEs.isEmpty, name != cname, direct || mode == .always else { return nil }
        for rule in permittedCNAMEs where SSHConfigPattern.matchesList(name, rule.source) == .match
            && SSHConfigPattern.matchesList(cname, rule.target, lowercase: false) == .match {
            return cname
        }
        return nil
    }

    /// `is_addr_fast`: a name with `%` or `:`, or only digits and dots, is never canonicalized.
    static func looksLikeAddress(_ name: String) -> Bool {
        name.contains("%") || name.contains(":") || name.allSatisfy { $0 == "." || ("0"..."9").contains($0) }
    }

    /// `CanonicalizePermittedCNAMEs` arguments: `none`, or `SOURCES:TARGETS` pattern lists.
    static func rules(_ arguments: [String]) -> Result<[CNAMERule], SSHOptionProblem> {
        if arguments.count == 1, arguments[0].lowercased() == "none" { return .success([]) }
        var rules: [CNAMERule] = []
        for argument in arguments {
            guard let colon = argument.firstIndex(of: ":"), colon != argument.startIndex,
                  argument.index(after: colon) != argument.endIndex else {
                return .failure(.invalid("CanonicalizePermittedCNAMEs \(InventoryDiagnostic.quote(argument)) is not SOURCES:TARGETS"))
            }
            rules.append(CNAMERule(source: String(argument[..<colon]).lowercased(),
                                   target: String(argument[argument.index(after: colon)...]).lowercased()))
        }
        return .success(rules)
    }
}
