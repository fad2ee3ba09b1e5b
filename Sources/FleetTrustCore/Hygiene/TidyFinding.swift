/// What is wrong with one known_hosts line, as `fleettrust tidy` reports it.
///
/// Kinds are an enum; they become words only where they are printed (`TidyReport`).
public enum TidyFindingKind: CaseIterable, Sendable, Hashable {
    /// Another line records the same key, with the same marker, for every name this one matches.
    case duplicate
    /// A name has two different keys of one type recorded (`ssh` accepts either).
    case conflicting
    /// The line can never match anything: `ssh` ignores it or no lookup string can equal it.
    case unmatchable
    /// A plain key that a `@revoked` line for the same name revokes.
    case revokedRecorded
    /// No inventory host uses any name of the line.
    case unknownHost
    /// A key type the host no longer presented at its last scan.
    case unusedKeyType
    /// One key recorded for names that belong to unrelated hosts.
    case sharedKey
}

/// A line of a known_hosts file (1-based, as OpenSSH counts).
public struct TidyLocation: Sendable, Hashable, Comparable {
    public let path: String
    public let line: Int
    /// Position of the file in the list it was given in, so that order follows `ssh`'s.
    let fileIndex: Int

    public static func < (a: TidyLocation, b: TidyLocation) -> Bool { (a.fileIndex, a.line) < (b.fileIndex, b.line) }
    public static func == (a: TidyLocation, b: TidyLocation) -> Bool { a.path == b.path && a.line == b.line }
    public func hash(into hasher: inout Hasher) { hasher.combine(path); hasher.combine(line) }
}

/// One finding: typed facts; the renderer words them.
public struct TidyFinding: Sendable, Hashable {
    public let location: TidyLocation
    public let kind: TidyFindingKind
    /// The lookup names concerned (never the hashed field itself).
    public let names: [String]
    /// Other lines the finding is about (the line duplicated, the conflicting key, the `@revoked` line).
    public let related: [TidyLocation]
    /// The key type concerned (conflicting, unused-key-type).
    public let keyType: String?
    /// Why OpenSSH ignores the line (unmatchable).
    public let reason: String?
    /// The line's exact text (cleaned where it is printed).
    public let text: String
    /// Whether `--fix` may remove the line: never a `@cert-authority` or `@revoked` line (nor
    /// any line starting with `@`), never a shared key (removing a line does not un-share it).
    public let removable: Bool
}
