/// The known_hosts lines `ssh` silently ignores (bad base64, a key type with no key, a misspelt
/// marker such as `@cert-authorty`), said once per file by the commands that judge against them,
/// so a line someone meant to count is not found missing only when `tidy` runs.
public enum IgnoredKnownHostsLines {
    static let shownPerFile = 5

    /// One sentence per file that has such lines, each file once across the sets.
    public static func warnings(_ knownHosts: KnownHostsSets) -> [String] {
        var seen = Set<String>()
        let files = knownHosts.sets.keys.sorted { $0.lexicographicallyPrecedes($1) }
            .flatMap { knownHosts.sets[$0]?.files ?? [] }.filter { seen.insert($0.path).inserted }
        return files.compactMap(warning)
    }

    static func warning(_ file: KnownHostsFile) -> String? {
        var ignored: [String] = []
        for line in file.lines {
            guard case .invalid(let reason) = line.content else { continue }
            ignored.append("line \(line.number) (\(reason))")
        }
        guard !ignored.isEmpty else { return nil }
        let more = ignored.count > shownPerFile ? " and \(ignored.count - shownPerFile) more" : ""
        return "warning: \(Sanitizer.clean(file.path)): ssh ignores " + ignored.prefix(shownPerFile).joined(separator: ", ")
            + more + " (fleettrust tidy lists them)"
    }
}
