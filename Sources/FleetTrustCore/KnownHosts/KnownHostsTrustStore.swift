/// A known_hosts file as the store of trust-on-first-use: keys are recorded under the
/// lookup string `ssh` uses, so the connect step's `ssh` finds them.
public struct KnownHostsTrustStore: TrustOnFirstUseStore {
    public let writer: KnownHostsWriter

    public init(path: String, hashNames: Bool) {
        self.writer = KnownHostsWriter(path: path, hashNames: hashNames)
    }

    public func storedKeys(for target: ConnectionTarget) throws -> [HostKey] {
        let file = try KnownHostsFile.read(path: writer.path)
        return Self.keys(in: file, for: target)
    }

    public func store(_ key: HostKey, for target: ConnectionTarget, expectedStoredKey: HostKey?) throws {
        let snapshot = try KnownHostsFile.read(path: writer.path)
        let sameType = Self.keys(in: snapshot, for: target).filter { $0.kind.plain == key.kind.plain }
        let name = target.lookup.hostString
        if let expected = expectedStoredKey {
            guard sameType.contains(expected) else { throw KnownHostsWriter.Refusal.concurrentChange(path: writer.path) }
            try writer.replace(expected, with: key, for: name, basedOn: snapshot)
        } else {
            guard sameType.isEmpty else { throw KnownHostsWriter.Refusal.concurrentChange(path: writer.path) }
            try writer.add(key, for: [name], basedOn: snapshot)
        }
    }

    static func keys(in file: KnownHostsFile, for target: ConnectionTarget) -> [HostKey] {
        KnownHosts(files: [file]).entries(matching: target.lookup.hostString)
            .filter { $0.entry.marker == nil }.compactMap { $0.entry.key.hostKey }
    }
}
