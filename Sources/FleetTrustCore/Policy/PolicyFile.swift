import Foundation

/// Which policy each host gets: the policy file's first matching line, unless the inventory names
/// one for the host (`fleettrust_policy`), which wins; `standard` otherwise.
///
/// File format, one rule a line, `#` comments:
///
///     PATTERNS POLICY
///
/// PATTERNS is a known_hosts pattern list matched against the host's names (as for pins: the
/// inventory name, its address, its `HostKeyAlias`, the lookup name, `[name]:port` forms); POLICY
/// is `standard`, `pinned`, `pin-only`, `ca` or `off` (or a custom policy's name, for a library
/// user who registered one). The first matching line wins. A file with a bad line is refused,
/// every bad line reported as `file:line: message`.
public struct PolicyFile: Sendable {
    public struct Rule: Sendable, Hashable {
        public let line: Int
        public let patterns: PatternList
        public let policy: String
    }

    public let path: String
    public let rules: [Rule]

    /// Parses `bytes`; throws `PinFileErrors`-style `PolicyFileErrors` listing every bad line.
    public static func parse(path: String, bytes: [UInt8], known: Set<String> = Set(PolicyName.allCases.map(\.rawValue))) throws -> PolicyFile {
        var rules: [Rule] = []
        var errors: [PinFileError] = []
        guard bytes.count <= 16 << 20 else { throw PolicyFileErrors(errors: [PinFileError(path: path, line: 0, reason: "the file is too large")]) }
        for (index, raw) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            guard let text = String(validating: raw, as: UTF8.self) else {
                errors.append(PinFileError(path: path, line: number, reason: "the line is not valid UTF-8"))
                continue
            }
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            if text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t" && $0 != "\r") || $0.value == 0x7f }) {
                errors.append(PinFileError(path: path, line: number, reason: "the line contains a control character"))
                continue
            }
            guard fields.count == 2 else {
                errors.append(PinFileError(path: path, line: number, reason: "expected PATTERNS POLICY"))
                continue
            }
            let policy = String(fields[1])
            guard known.contains(policy) else {
                errors.append(PinFileError(path: path, line: number, reason:
                    "unknown policy \(InventoryDiagnostic.quote(policy)); expected one of \(known.sorted().joined(separator: ", "))"))
                continue
            }
            if let reason = PinFileParser.nonCanonicalAddress(in: first) {
                errors.append(PinFileError(path: path, line: number, reason: reason.text))
                continue
            }
            rules.append(Rule(line: number, patterns: PatternList(ArraySlice(first.utf8)), policy: policy))
        }
        guard errors.isEmpty else { throw PolicyFileErrors(errors: errors) }
        return PolicyFile(path: path, rules: rules)
    }

    public static func read(path: String, known: Set<String> = Set(PolicyName.allCases.map(\.rawValue))) throws -> PolicyFile {
        return try parse(path: path, bytes: InputFile.read(path, role: "policy file"), known: known)
    }

    /// The first rule matching one of `names` and negating none of them.
    public func rule(for names: [String]) -> Rule? {
        let lowered = names.map { KnownHostsPattern.lowercased(Array($0.utf8)) }
        return rules.first { $0.patterns.applies(to: lowered) }
    }
}

/// Every bad line of a policy file; prints one `file:line: message` per line.
public struct PolicyFileErrors: Error, Sendable, CustomStringConvertible {
    public let errors: [PinFileError]
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// Where a host's policy came from.
public enum PolicySource: Hashable, Sendable {
    case defaultPolicy
    case file(SourceLocation)
    case inventory
}

/// Resolves each host's policy: inventory variable, then policy file, then `standard`.
public struct PolicyResolver: Sendable {
    public var file: PolicyFile?
    /// Custom policies by name (library users), usable from the file and the inventory.
    public var custom: [String: TrustPolicy]

    public init(file: PolicyFile? = nil, custom: [TrustPolicy] = []) {
        self.file = file
        self.custom = Dictionary(custom.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public func policy(for host: InventoryHost, names: [String]) -> (TrustPolicy, PolicySource) {
        if let named = host.policy, let policy = lookup(named) { return (policy, .inventory) }
        if let file, let rule = file.rule(for: names), let policy = lookup(rule.policy) {
            return (policy, .file(SourceLocation(file: file.path, line: rule.line)))
        }
        return (.standard, .defaultPolicy)
    }

    private func lookup(_ name: String) -> TrustPolicy? {
        PolicyName(rawValue: name).map(TrustPolicy.builtIn) ?? custom[name]
    }

    /// `$XDG_CONFIG_HOME/fleettrust/policy`, else `~/.config/fleettrust/policy`.
    public static func defaultPath(environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/fleettrust/policy" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/fleettrust/policy"
    }
}

extension InventoryHost {
    /// The host as this machine's policy file sees it, without the policy its (recorded) inventory named.
    var withoutInventoryPolicy: InventoryHost {
        var host = self
        host.policy = nil
        return host
    }
}
