/// All known_hosts files `ssh` reads for a connection, merged in order
/// (`UserKnownHostsFile` then `GlobalKnownHostsFile`), as OpenSSH merges them.
public struct KnownHosts: Sendable {
    public let files: [KnownHostsFile]
    public let options: Options

    /// Behaviour beyond OpenSSH, off by default: with these off, the answer is `ssh`'s.
    public struct Options: Sendable, Hashable {
        /// Extension: host-field elements like `192.0.2.0/24` or `2001:db8::/64` match
        /// bare address lookups inside that network (OpenSSH treats them as literal text).
        public var cidrPatterns: Bool

        public init(cidrPatterns: Bool = false) { self.cidrPatterns = cidrPatterns }
    }

    public init(files: [KnownHostsFile], options: Options = Options()) {
        self.files = files
        self.options = options
    }

    public static func read(paths: [String], options: Options = Options()) throws -> KnownHosts {
        KnownHosts(files: try paths.map { try KnownHostsFile.read(path: $0) }, options: options)
    }

    /// A valid entry whose host field matched a lookup string, with where it is.
    public struct Match: Sendable, Hashable {
        public let path: String
        public let line: Int
        public let entry: KnownHostsEntry
    }

    /// A copy with every file's hashed lines matched against `lookups` once, in bulk (see
    /// `KnownHostsFile.preparing(lookups:)`); later lookups of those strings are cheap.
    public func preparing(lookups: [String]) -> KnownHosts {
        KnownHosts(files: files.map { $0.preparing(lookups: lookups) }, options: options)
    }

    /// Every valid entry whose host field matches `lookup`, in file and line order.
    public func entries(matching lookup: String) -> [Match] {
        var matches: [Match] = []
        for file in files {
            for index in file.matchingLines(lookup, cidr: options.cidrPatterns) {
                let line = file.lines[index]
                matches.append(Match(path: file.path, line: line.number, entry: line.entry!))
            }
        }
        return matches
    }
}

extension KnownHosts {
    /// The text of the line a match came from (for confirmations and the audit log).
    public func lineText(_ match: Match) -> String { lineText(path: match.path, line: match.line) }

    /// The text of line `line` (1-based) of the file at `path`, if it is one of these files.
    public func lineText(path: String, line: Int) -> String {
        guard let file = files.first(where: { $0.path == path }), line >= 1 else { return "" }
        if line <= file.lines.count, file.lines[line - 1].number == line { return String(decoding: file.lines[line - 1].raw, as: UTF8.self) }
        return file.lines.first { $0.number == line }.map { String(decoding: $0.raw, as: UTF8.self) } ?? ""
    }
}
