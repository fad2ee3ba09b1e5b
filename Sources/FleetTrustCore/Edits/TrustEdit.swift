/// One change to a user's trust store (a known_hosts or pin file), as a person or a command decided
/// it, carrying what was true when it was decided: `TrustStoreEditor` applies it only if that still
/// holds (compare-and-set). The dashboard's trust, replace, forget and pin, `sync`'s additions and
/// `tidy --fix`'s removals are all `TrustEdit`s, so there is one write path to keep safe.
public struct TrustEdit: Sendable {
    public enum Change: Sendable {
        /// Records `keys` for the lookup strings `names`. `expecting` is what the file recorded
        /// (unmarked keys' fingerprints) for the names when decided; nil: no check. A key among
        /// them is not written twice.
        case add(names: [String], keys: [HostKey], expecting: [String]?)
        /// Drops the unmarked entries for `names` whose keys have the fingerprints in `removing`
        /// (other names on a shared line keep them) and records `keys` instead.
        case replace(names: [String], removing: Set<String>, keys: [HostKey], expecting: [String])
        /// Drops every unmarked entry recording `expecting` for `names`, plain or hashed, as
        /// `ssh-keygen -R` does; `@cert-authority` and `@revoked` lines stay.
        case forget(names: [String], expecting: [String])
        /// Appends a pin line `NAMES FINGERPRINT…` (a fingerprint may be a TLS `pin-sha256:BASE64`).
        /// `expecting` is what the file pinned (in force) for the names when decided; `spki`
        /// compares TLS SPKI pins instead of SSH fingerprints.
        case pin(names: [String], fingerprints: [String], expecting: Set<String>, spki: Bool)
        /// Removes these lines (1-based) of `file` as it was read; lines appended since are kept,
        /// any other change refuses it. `@`-lines are never removed.
        case removeLines(Set<Int>, of: KnownHostsFile)
    }

    /// The file written.
    public var path: String
    public var change: Change
    /// Whether new known_hosts names are hashed; nil: the editor's default (`HashKnownHosts`).
    public var hashNames: Bool?

    public init(path: String, change: Change, hashNames: Bool? = nil) {
        self.path = path
        self.change = change
        self.hashNames = hashNames
    }

    /// Removes `lines` of `file`, the file's own path.
    public static func removeLines(_ lines: Set<Int>, of file: KnownHostsFile) -> TrustEdit {
        TrustEdit(path: file.path, change: .removeLines(lines, of: file))
    }
}
