import Foundation

/// A team's pinned host keys: which fingerprints each host may present.
///
/// known_hosts answers "what did we see before"; a pin set answers "what must this host
/// present", checked in addition, so a rotated or swapped key is caught even on a
/// machine whose known_hosts is empty or was edited.
///
/// File format (one pin line per host pattern list; `#` starts a comment line):
///
///     PATTERNS FINGERPRINT [FINGERPRINT...] [expires=YYYY-MM-DD]
///
/// - `PATTERNS`: a comma-separated host pattern list exactly as in known_hosts (`*`, `?`,
///   `!negation`; case-insensitive). Pins are the team's, not `ssh`'s: a line applies when it
///   matches any of the host's names (the inventory name, its address, its `HostKeyAlias`, the
///   known_hosts lookup name, each also as `[name]:port` for ports other than 22).
/// - `ca:FINGERPRINT` pins a certificate authority: a host certificate signed by that CA's key
///   satisfies the pin when it is valid for the host as a `@cert-authority` line requires (host
///   certificate, valid now, principals name the host or are empty, no critical options, not
///   SHA-1 signed), so host keys can rotate under the same CA. Key and CA pins mix freely.
/// - `FINGERPRINT`: an OpenSSH SHA-256 fingerprint as `ssh-keygen -lf` prints it
///   (`SHA256:` followed by 43 base64 characters); the `SHA256:` prefix may be left out
///   and trailing `=` padding is accepted. Several fingerprints form a set (for example
///   the current and the next key during a rotation): any one of them satisfies the pin.
/// - `expires=YYYY-MM-DD` (optional, last field): the pin binds through that day (UTC)
///   and no longer after it; an expired pin is reported, never enforced.
///
/// Several lines may apply to one host; their fingerprints are combined. Fields are
/// separated by spaces or tabs; CRLF line ends are accepted.
///
/// A bad line is reported as `file:line: message`, every one of them at once. `parse` and
/// `read` refuse a file with bad lines (a skipped pin would leave its host unpinned);
/// `init(path:bytes:)` keeps the good lines and lists the bad ones in `errors`.
public struct PinSet: Sendable {
    public let path: String
    /// Every pin line, parsed when asked for, over the file's one buffer.
    public let lines: PinLineList
    /// The lines that were skipped, and why.
    public let errors: [PinFileError]
    /// Which lines (indices into `lines`) list a literal name.
    private let literalIndex: LiteralNameIndex
    /// Indices into `lines` of lines whose patterns are not all literal names: every lookup
    /// evaluates them.
    private let patternLines: [Int32]

    /// Reads any bytes, never failing: bad lines are skipped and listed in `errors`. The bytes
    /// are kept once, with where each good line starts; a line's value is parsed when asked
    /// for, by the parser that accepted it here.
    public init(path: String, bytes: [UInt8]) {
        var literal = LiteralNameIndex(), patterns: [Int32] = []
        let parsed = PinFileParser.index(path: path, bytes: bytes) { index, line in
            if let names = line.patterns.literalNames {
                literal.add(names, line: index)
            } else {
                patterns.append(Int32(index))
            }
        }
        literal.seal()
        self.path = path
        self.errors = parsed.errors
        self.lines = PinLineList(bytes: bytes, starts: parsed.starts, numbers: parsed.numbers)
        self.literalIndex = literal
        self.patternLines = patterns
    }

    /// Reads the file through `GuardedFile` (symlinks followed, typed errors); throws
    /// `PinFileErrors` listing every bad line.
    public static func read(path: String) throws -> PinSet {
        return try parse(path: path, bytes: InputFile.read(path, role: "pin file"))
    }

    /// Throws `PinFileErrors` listing every bad line.
    public static func parse(path: String, bytes: [UInt8]) throws -> PinSet {
        let set = PinSet(path: path, bytes: bytes)
        guard set.errors.isEmpty else { throw PinFileErrors(errors: set.errors) }
        return set
    }

    /// The pin lines whose patterns match one of `names` and negate none of them, in file order:
    /// literal names through the index (each hit checked against the line), the other lines evaluated.
    public func lines(for names: [String]) -> [PinLine] {
        let lowered = Set(names).map { KnownHostsPattern.lowercased(Array($0.utf8)) }
        var candidates = Set(patternLines.map(Int.init))
        for name in lowered { candidates.formUnion(literalIndex.candidates(name)) }
        return candidates.sorted().map { lines[$0] }.filter { $0.patterns.applies(to: lowered) }
    }

    /// The names a pin line is matched against for a host: its inventory name, its address
    /// (canonical too), its `HostKeyAlias` and the known_hosts lookup name, with `[name]:port`
    /// forms for ports other than 22.
    public static func names(for host: InventoryHost, lookup: LookupName) -> [String] {
        switch host.endpoint {
        case .tls(let tls): return tlsNames(for: host, endpoint: tls)
        case .ssh: break
        }
        var bare = [host.name, host.address, LookupName.canonicalHost(host.address), lookup.name]
        if let alias = host.hostKeyAlias { bare.append(alias) }
        var names: [String] = []
        for name in bare where !name.isEmpty {
            for form in [name, LookupName.hostPort(name, port: host.port)] where !names.contains(form) { names.append(form) }
        }
        if !names.contains(lookup.hostString) { names.append(lookup.hostString) }
        return names
    }
}

extension PinSet {
    /// The names a pin or policy line is matched against for a TLS endpoint: `[name]:port` for
    /// its server name and its address, and its row name `host:port/tls`. Never a bare name, so a
    /// line for a host's SSH keys does not apply to its TLS endpoints.
    static func tlsNames(for host: InventoryHost, endpoint: TLSEndpoint) -> [String] {
        var names: [String] = []
        for name in [endpoint.serverName, host.address, LookupName.canonicalHost(host.address)].compactMap({ $0 }) where !name.isEmpty {
            let form = "[\(name)]:\(host.port)"
            if !names.contains(form) { names.append(form) }
        }
        if !names.contains(host.name) { names.append(host.name) }
        return names
    }

    /// The pattern a new pin for a TLS endpoint is written under: `[name]:port` for its server
    /// name, or its address when it has none.
    public static func tlsPinPattern(for host: InventoryHost) -> String {
        var name = host.address
        if case .tls(let endpoint) = host.endpoint, let serverName = endpoint.serverName { name = serverName }
        return "[\(name)]:\(host.port)"
    }
}

/// One parsed pin line.
public struct PinLine: Sendable, Hashable {
    public let number: Int
    public let patterns: PatternList
    /// Fingerprints of host keys.
    public let fingerprints: Set<SHA256Fingerprint>
    /// Fingerprints of CA keys (written `ca:SHA256:...`).
    public var authorities: Set<SHA256Fingerprint> = []
    /// TLS public-key pins (written `pin-sha256:BASE64`), matching the leaf or any certificate
    /// of the validated chain.
    public var spkiPins: Set<SPKIPin> = []
    /// Seconds since the epoch from which the pin no longer binds.
    public let expiresAt: UInt64?

    public func isExpired(at now: UInt64) -> Bool { expiresAt.map { now >= $0 } ?? false }
}

/// The good lines of a pin file as a collection over the file's one buffer: a line's
/// `PinLine` is parsed when asked for (a pin file of many thousand lines is not held as as many
/// parsed sets of strings).
public struct PinLineList: RandomAccessCollection, Sendable {
    let bytes: [UInt8]
    /// Where each good pin line starts in `bytes`, and its line number.
    let starts: [UInt32]
    let numbers: [UInt32]

    public var startIndex: Int { 0 }
    public var endIndex: Int { starts.count }

    public subscript(index: Int) -> PinLine {
        let start = Int(starts[index])
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
        // Indexed only after this same parser accepted the line.
        guard case .success(let line)? = PinFileParser.parseLine(bytes[start..<end], number: Int(numbers[index])) else {
            preconditionFailure("pin line \(numbers[index]) no longer parses as it did when indexed")
        }
        return line
    }
}

/// A pin file line that cannot be read, with where it is.
public struct PinFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public let path: String
    public let line: Int
    public let reason: String

    public var description: String {
        line > 0 ? "\(Sanitizer.clean(path)):\(line): \(reason)" : "\(Sanitizer.clean(path)): \(reason)"
    }
}

/// Every bad line of a pin file; prints one `file:line: message` per line.
public struct PinFileErrors: Error, Sendable, Hashable, CustomStringConvertible {
    public let errors: [PinFileError]

    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// How pin mismatches count (`--pins-mode`).
public enum PinMode: String, Sendable, Codable, CaseIterable {
    /// A mismatch makes the host `pin-mismatch`.
    case enforce
    /// A mismatch is shown but does not fail the host (for rolling pins out).
    case report
}

/// The pin answer for a host, with the lines that decided it.
public struct PinJudgement: Sendable, Hashable {
    public var verdict: PinVerdict
    public var evidence: [TrustEvidence]
    /// The fingerprints of the pins in force for the host.
    public var pinned: Set<SHA256Fingerprint> = []

    /// The TLS public-key pins in force for the endpoint.
    public var pinnedSPKI: Set<SPKIPin> = []
    /// Every pin in force as its text (fingerprints, SPKI pins): what a pin write checks is
    /// still in the file.
    public var pinnedText: Set<String> { Set(pinned.map(\.description)).union(pinnedSPKI.map(\.description)) }

    /// The CA fingerprints pinned in force for the host.
    public var pinnedAuthorities: Set<SHA256Fingerprint> = []
    /// The certificates (by certified-key fingerprint) that satisfied a CA pin.
    public var certifiedByPinnedCA: Set<SHA256Fingerprint> = []
    /// Whether the key `ssh` meets is one the pins contradict: no pin vouches for it, while the
    /// pinned key of its type was shown only to the host's other connections.
    public var contradictsMetKey = false

    public init(verdict: PinVerdict, evidence: [TrustEvidence], pinned: Set<SHA256Fingerprint> = [],
                pinnedAuthorities: Set<SHA256Fingerprint> = [], certifiedByPinnedCA: Set<SHA256Fingerprint> = []) {
        self.verdict = verdict
        self.evidence = evidence
        self.pinned = pinned
        self.pinnedAuthorities = pinnedAuthorities
        self.certifiedByPinnedCA = certifiedByPinnedCA
    }

    /// Judges the presented keys: the pin holds when one of them is pinned, or when a certificate
    /// valid for `certificateName` (the name `ssh` checks principals against) is signed by a
    /// pinned CA. A pin vouches only for the keys it names: each key type is fetched over its own
    /// connection and nothing proves two connections reached the same machine, so a presented key
    /// no pin names, while a pinned fingerprint matches no presented key (it may be that key's
    /// type, shown by another machine), is a mismatch even though another key matched.
    ///
    /// `meets`, the key `ssh` meets (when known), must not be one the pins contradict: a key no
    /// pin names, of a type whose pinned key the host showed only to its other connections, is a
    /// mismatch however many other keys matched.
    public static func judge(keys: [HostKey], names: [String], certificateName: String? = nil, pins: PinSet?, mode: PinMode,
                             now: UInt64 = UInt64(Date().timeIntervalSince1970), meets: HostKey? = nil) -> PinJudgement {
        guard let pins else { return PinJudgement(verdict: .unpinned, evidence: []) }
        let applicable = pins.lines(for: names).filter { !$0.fingerprints.isEmpty || !$0.authorities.isEmpty }
        if applicable.isEmpty { return PinJudgement(verdict: .unpinned, evidence: []) }
        let active = applicable.filter { !$0.isExpired(at: now) }
        if active.isEmpty { return PinJudgement(verdict: .expired, evidence: evidence(applicable, pins.path)) }
        let pinned = active.reduce(into: Set<SHA256Fingerprint>()) { $0.formUnion($1.fingerprints) }
        let authorities = active.reduce(into: Set<SHA256Fingerprint>()) { $0.formUnion($1.authorities) }
        var vouched: [SHA256Fingerprint: SHA256Fingerprint] = [:]
        if let certificateName, !authorities.isEmpty {
            for key in keys where key.isCertificate {
                guard let certificate = try? HostCertificate(key), CertificateAcceptance.invalidity(of: certificate) == nil,
                      CertificateAcceptance.problem(with: certificate, name: certificateName, now: now) == nil,
                      authorities.contains(certificate.signatureKey.fingerprint) else { continue }
                vouched[key.fingerprint] = certificate.signatureKey.fingerprint
            }
        }
        let matchedKeys = keys.map(\.fingerprint).filter(pinned.contains)
        let unnamed = keys.contains { !pinned.contains($0.fingerprint) && vouched[$0.fingerprint] == nil }
        let unaccounted = !pinned.isSubset(of: keys.map(\.fingerprint))
        var judgement = PinJudgement(verdict: .matched, evidence: [], pinned: pinned, pinnedAuthorities: authorities,
                                     certifiedByPinnedCA: Set(vouched.keys))
        let contradicted = meets.map { met in
            !judgement.vouches(for: met) && keys.contains { pinned.contains($0.fingerprint) && $0.kind.plain == met.kind.plain }
        } ?? false
        if !matchedKeys.isEmpty || !vouched.isEmpty, !(unnamed && unaccounted), !contradicted {
            judgement.evidence = evidence(active.filter { line in
                matchedKeys.contains { line.fingerprints.contains($0) } || vouched.values.contains { line.authorities.contains($0) }
            }, pins.path)
            return judgement
        }
        judgement.verdict = mode == .enforce ? .mismatch : .reportedMismatch
        judgement.evidence = evidence(active, pins.path)
        judgement.contradictsMetKey = contradicted
        return judgement
    }

    /// Whether a pin vouches for `key` itself: its fingerprint is pinned, or (a certificate) its
    /// certified key is pinned or a pinned CA signed it.
    public func vouches(for key: HostKey) -> Bool {
        pinned.contains(key.fingerprint) || pinned.contains(SharedKeys.plainKey(of: key).fingerprint)
            || key.isCertificate && certifiedByPinnedCA.contains(key.fingerprint)
    }

    /// What the pins say about one of the host's keys (a certificate matches through its CA pin).
    public func verdict(for key: HostKey?) -> PinVerdict {
        switch verdict {
        case .unpinned, .expired, .notListed: return verdict
        case .matched, .mismatch, .reportedMismatch:
            if let key, pinned.contains(key.fingerprint) || (key.isCertificate && certifiedByPinnedCA.contains(key.fingerprint)) {
                return .matched
            }
            return verdict == .matched ? .notListed : verdict
        }
    }

    private static func evidence(_ lines: [PinLine], _ path: String) -> [TrustEvidence] {
        lines.flatMap { line in
            line.fingerprints.sorted().map {
                TrustEvidence(role: .pin, path: path, line: line.number, keyType: "pin", fingerprint: $0.description, hashed: false)
            } + line.authorities.sorted().map {
                TrustEvidence(role: .pin, path: path, line: line.number, keyType: "CA pin", fingerprint: $0.description, hashed: false)
            }
        }
    }
}
