/// A `HostKeyAlgorithms`, `CASignatureAlgorithms` or `KexAlgorithms` value: a comma-separated list of algorithm
/// names or patterns that replaces OpenSSH's default, or (after `+`, `-`, `^`) appends to it,
/// removes from it, or puts itself first (`kex.c:kex_assemble_names`).
///
/// The form matters beyond the resulting list: `ssh` reorders its host-key algorithms by what
/// known_hosts records only when `HostKeyAlgorithms` is unset or starts with `+` or `-`
/// (`sshconnect2.c:ssh_kex2`), so a replaced or `^` list is used in the order written. It is kept
/// as written in reports (`+ssh-rsa`), which is also how it is encoded.
public struct SSHAlgorithmList: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public enum Form: Hashable, Sendable {
        /// A plain list: replaces the default.
        case replace
        /// `+list`: appended to the default.
        case append
        /// `-list`: removed from the default.
        case remove
        /// `^list`: put before the default.
        case prepend
    }

    public let form: Form
    /// The list's elements (names or `*`/`?` patterns), without the leading form character.
    public let patterns: [String]
    /// The value as written.
    public let description: String

    /// Splits a value as `kex_assemble_names` reads it; any text is a list (checks are `parse`'s).
    public init(_ text: String) {
        description = text
        var body = Substring(text)
        switch body.first {
        case "+": form = .append; body = body.dropFirst()
        case "-": form = .remove; body = body.dropFirst()
        case "^": form = .prepend; body = body.dropFirst()
        default: form = .replace
        }
        patterns = body.split(separator: ",", omittingEmptySubsequences: true).map(String.init)
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// `readconf.c`'s check: unless the list removes, every element must be a name `ssh` knows or
    /// (`sshkey_names_valid2`, for key algorithms) a pattern matching one; `KexAlgorithms`
    /// (`kex_names_valid`) takes exact names only. `ssh` refuses the configuration otherwise.
    public static func parse(_ text: String, known: [String], patterns allowed: Bool = true) -> Result<SSHAlgorithmList, SSHOptionProblem> {
        let list = SSHAlgorithmList(text)
        guard list.form != .remove else { return .success(list) }
        guard !list.patterns.isEmpty else { return .failure(.invalid("is an empty list")) }
        func valid(_ pattern: String) -> Bool {
            guard allowed else { return known.contains(pattern) }
            return known.contains { matches($0, pattern.hasPrefix("!") ? String(pattern.dropFirst()) : pattern) }
        }
        for pattern in list.patterns where !valid(pattern) {
            return .failure(.invalid("names no algorithm OpenSSH 9.2 knows (\(InventoryDiagnostic.quote(pattern)))"))
        }
        return .success(list)
    }

    /// Whether `ssh` puts the algorithms known_hosts records for the host first.
    public var reordersByKnownHosts: Bool { form == .append || form == .remove }

    /// `kex_assemble_names`: the default changed by this list, each element matched against the
    /// `known` names (case-sensitive `*`/`?` patterns), unknown names dropped. Empty when nothing
    /// is selected (`ssh` then refuses to start).
    public func assemble(defaults: [String], known: [String]) -> [String] {
        let list: [String]
        switch form {
        case .append: list = Self.unique(defaults + patterns)
        case .remove: return defaults.filter { name in !patterns.contains { Self.matches(name, $0) } }
        case .prepend: list = Self.unique(patterns + defaults)
        case .replace: list = patterns
        }
        var assembled: [String] = []
        for pattern in list {
            guard !pattern.hasPrefix("!") else { return [] }
            for name in known where Self.matches(name, pattern) && !assembled.contains(name) {
                assembled.append(name)
            }
        }
        return assembled
    }

    public init(from decoder: Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(CleanText(description).value)
    }

    /// `match_pattern`, case-sensitive, as algorithm lists are matched.
    private static func matches(_ name: String, _ pattern: String) -> Bool {
        KnownHostsPattern.glob(Array(name.utf8), Array(pattern.utf8))
    }

    private static func unique(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}
