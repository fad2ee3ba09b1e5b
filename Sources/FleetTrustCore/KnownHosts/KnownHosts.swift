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

    /// Matches computed ahead by `prepared(for:)`, by lookup string.
    private var prepared: [String: [Match]] = [:]

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

    /// Every valid entry whose host field matches `lookup`, in file and line order.
    public func entries(matching lookup: String) -> [Match] {
        if let ready = prepared[lookup] { return ready }
        var matches: [Match] = []
        for file in files {
            for index in file.matchingLines(lookup, cidr: options.cidrPatterns) {
                let line = file.lines[index]
                matches.append(Match(path: file.path, line: line.number, entry: line.entry!))
            }
        }
        return matches
    }

    /// A copy that answers `entries(matching:)` for all `lookups` from one pass over the
    /// hashed lines (lines outer, names inner, split over `threads`): for judging many
    /// hosts at once, where one lookup at a time would re-walk every hashed line per name.
    public func prepared(for lookups: [String], threads: Int = 2) -> KnownHosts {
        let unique = Array(Set(lookups).subtracting(prepared.keys))
        var result = self
        var collected = [[Match]](repeating: [], count: unique.count)
        for file in files {
            let perName = file.matchingLines(each: unique, cidr: options.cidrPatterns, threads: threads)
            for (index, lines) in perName.enumerated() {
                collected[index] += lines.map { Match(path: file.path, line: file.lines[$0].number, entry: file.lines[$0].entry!) }
            }
        }
        for (index, name) in unique.enumerated() { result.prepared[name] = collected[index] }
        return result
    }
}
