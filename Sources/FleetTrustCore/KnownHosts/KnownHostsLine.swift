/// One line of a known_hosts file, parsed once, with its exact bytes kept.
///
/// The writer must keep every unrelated byte, and evidence must name the file and line,
/// so a line remembers where it came from as well as what OpenSSH reads in it.
public struct KnownHostsLine: Sendable, Hashable {
    /// 1-based, as OpenSSH counts (one per `\n`).
    public let number: Int
    /// The bytes of the line, without its `\n` (a `\r` stays, as OpenSSH leaves it).
    public let raw: [UInt8]
    public let content: Content

    public enum Content: Sendable, Hashable {
        /// Empty, whitespace only, or starting with `#`.
        case comment
        case entry(KnownHostsEntry)
        /// A line OpenSSH ignores, with the reason.
        case invalid(String)
    }

    public var entry: KnownHostsEntry? {
        if case .entry(let entry) = content { return entry }
        return nil
    }

    /// Whether the line's first word is a marker (`@cert-authority`, `@revoked`, or one OpenSSH
    /// does not know): such lines are never tidied away, valid or not.
    static func startsWithMarker(_ raw: [UInt8]) -> Bool {
        raw.drop { $0 == 0x20 || $0 == 0x09 }.first == UInt8(ascii: "@")
    }
}

/// The marker that starts a line, if any.
public enum KnownHostsMarker: String, Sendable, Hashable {
    case certAuthority = "@cert-authority"
    case revoked = "@revoked"
}

/// The first field of a line: a pattern list, or one hashed name.
public enum HostField: Sendable, Hashable {
    case patterns(PatternList)
    case hashed(HashedHostName)
}

/// A parsed pattern list: the original text and its lowercased elements.
public struct PatternList: Sendable, Hashable {
    public let text: String
    let elements: [KnownHostsPattern.Element]

    /// Whether an element looks like an address network (for the CIDR extension).
    let hasNetworkElement: Bool

    init(_ bytes: ArraySlice<UInt8>) {
        self.text = String(decoding: bytes, as: UTF8.self)
        self.elements = KnownHostsPattern.Element.split(Array(bytes))
        self.hasNetworkElement = elements.contains { $0.pattern.contains(UInt8(ascii: "/")) }
    }

    public func match(_ lowercasedName: [UInt8], cidr: Bool = false) -> PatternMatch {
        cidr && hasNetworkElement
            ? KnownHostsPattern.matchWithCIDR(name: lowercasedName, elements: elements)
            : KnownHostsPattern.match(name: lowercasedName, elements: elements)
    }

    /// Whether the list applies to a host known by several names (pin and policy lines), as
    /// OpenSSH weighs a known_hosts line for the host name and its address: a negated element
    /// matching any of the names rules the line out for the host, whatever its other names match.
    public func applies(to lowercasedNames: [[UInt8]]) -> Bool {
        var matched = false
        for name in lowercasedNames {
            switch match(name) {
            case .negated: return false
            case .match: matched = true
            case .noMatch: break
            }
        }
        return matched
    }

    /// The names this list matches exactly and only (no wildcard, no negation, no overlong
    /// element), so an index may answer for it; nil when the list must be evaluated.
    var literalNames: [[UInt8]]? {
        guard !hasNetworkElement, elements.allSatisfy({ !$0.negated && !$0.tooLong && $0.isLiteral }) else { return nil }
        return elements.map(\.pattern).filter { !$0.isEmpty }
    }
}

/// A valid known_hosts entry: what OpenSSH loads into its list of host keys.
public struct KnownHostsEntry: Sendable, Hashable {
    public let marker: KnownHostsMarker?
    public let hosts: HostField
    public let key: RecordedKey
    /// Whatever follows the key (may be empty).
    public let comment: String
    /// What OpenSSH's `sshkey_equal_public` compares: for a certificate, the certified key.
    let publicKey: RecordedKey
}

/// A key as recorded in a line. OpenSSH reads some key types fleettrust cannot decode
/// (security-key types); such a line still counts as "a different key" for OpenSSH.
public enum RecordedKey: Sendable, Hashable {
    case key(HostKey)
    case opaque(type: String, blob: [UInt8])

    public var hostKey: HostKey? {
        if case .key(let key) = self { return key }
        return nil
    }

    public var typeName: String {
        switch self {
        case .key(let key): return key.type
        case .opaque(let type, _): return type
        }
    }

    /// The SHA-256 fingerprint, as `ssh-keygen -lf` prints it.
    public var fingerprint: String {
        switch self {
        case .key(let hostKey): return hostKey.sha256Fingerprint
        case .opaque(_, let blob): return "SHA256:" + Base64.encode(Digest.sha256(blob), padded: false)
        }
    }
}
