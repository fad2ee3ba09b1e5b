/// The known_hosts files each host is judged against, read once: the default files (given with
/// `--known-hosts`, or OpenSSH's), replaced for a host whose configuration names its own
/// `UserKnownHostsFile` or `GlobalKnownHostsFile`, as `ssh` replaces them.
public struct KnownHostsSets: Sendable {
    /// Files read for hosts whose configuration names no user file.
    public let userFiles: [String]
    /// Files read for hosts whose configuration names no global file.
    public let globalFiles: [String]
    /// The parsed files, by the list of paths a host reads.
    public let sets: [[String]: KnownHosts]

    public init(userFiles: [String], globalFiles: [String], sets: [[String]: KnownHosts]) {
        self.userFiles = userFiles
        self.globalFiles = globalFiles
        self.sets = sets
    }

    /// One set of files for every host (tests, verify).
    public init(_ knownHosts: KnownHosts) {
        let paths = knownHosts.files.map(\.path)
        self.init(userFiles: paths, globalFiles: [], sets: [paths: knownHosts])
    }

    /// The files `ssh` reads for this host, in order (`UserKnownHostsFile none`: no user file).
    public func paths(for host: InventoryHost) -> [String] {
        user(for: host) + (host.sshOptions.globalKnownHostsFiles ?? globalFiles)
    }

    /// Where a new key for this host goes: the file `ssh` writes to; empty when `ssh` has none
    /// (`UserKnownHostsFile none`), so that nothing creates a file `ssh` would not read.
    public func saveFile(for host: InventoryHost) -> String {
        host.sshOptions.noUserKnownHostsFile == true ? "" : paths(for: host).first ?? ""
    }

    private func user(for host: InventoryHost) -> [String] {
        if host.sshOptions.noUserKnownHostsFile == true { return [] }
        return host.userKnownHostsFiles.isEmpty ? userFiles : host.userKnownHostsFiles
    }

    /// Every file any of these hosts reads, each once.
    public static func allPaths(userFiles: [String], globalFiles: [String], hosts: [InventoryHost]) -> [String] {
        let sets = KnownHostsSets(userFiles: userFiles, globalFiles: globalFiles, sets: [:])
        var seen = Set<String>()
        return ([userFiles + globalFiles] + hosts.map(sets.paths(for:))).flatMap { $0 }.filter { seen.insert($0).inserted }
    }

    /// Reads every file these hosts use, each once (a missing file reads as empty, as for `ssh`).
    public static func read(userFiles: [String], globalFiles: [String], hosts: [InventoryHost],
                            options: KnownHosts.Options = KnownHosts.Options(),
                            read: (String) throws -> KnownHostsFile = KnownHostsFile.read(path:)) throws -> KnownHostsSets {
        let shape = KnownHostsSets(userFiles: userFiles, globalFiles: globalFiles, sets: [:])
        var files: [String: KnownHostsFile] = [:]
        var sets: [[String]: KnownHosts] = [:]
        for paths in [userFiles + globalFiles] + hosts.map(shape.paths(for:)) where sets[paths] == nil {
            for path in paths where files[path] == nil { files[path] = try read(path) }
            sets[paths] = KnownHosts(files: paths.map { files[$0]! }, options: options)
        }
        return KnownHostsSets(userFiles: userFiles, globalFiles: globalFiles, sets: sets)
    }

    /// The parsed files for this host.
    public func knownHosts(for host: InventoryHost) -> KnownHosts {
        sets[paths(for: host)] ?? KnownHosts(files: [])
    }
}
