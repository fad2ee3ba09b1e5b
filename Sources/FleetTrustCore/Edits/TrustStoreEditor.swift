/// Applies `TrustEdit`s: the one place where fleettrust changes a known_hosts or pin file.
///
/// Every edit is locked, atomic and compare-and-set (`GuardedFile`, through `KnownHostsWriter`,
/// `PinFileWriter` and `TidyFix`): it re-reads the file under its lock, is refused when what the
/// edit was decided on no longer holds, keeps every unrelated byte (a missing final newline too),
/// and keeps the file's mode, owner and symbolic link.
public struct TrustStoreEditor: Sendable {
    /// Whether new known_hosts names are hashed when an edit does not say (`HashKnownHosts`).
    public var hashNames: Bool

    public init(hashNames: Bool) {
        self.hashNames = hashNames
    }

    public func apply(_ edit: TrustEdit) throws {
        let writer = KnownHostsWriter(path: edit.path, hashNames: edit.hashNames ?? hashNames)
        switch edit.change {
        case .add(let names, let keys, let expecting):
            let recorded = Set(expecting ?? [])
            try writer.update(names: names, removing: [], adding: keys.filter { !recorded.contains($0.sha256Fingerprint) },
                              expecting: expecting)
        case .replace(let names, let removing, let keys, let expecting):
            let kept = Set(expecting).subtracting(removing)
            try writer.update(names: names, removing: removing, adding: keys.filter { !kept.contains($0.sha256Fingerprint) },
                              expecting: expecting)
        case .forget(let names, let expecting):
            try writer.update(names: names, removing: Set(expecting), adding: [], expecting: expecting)
        case .pin(let names, let fingerprints, let expecting, let spki):
            try PinFileWriter(path: edit.path).addPin(patterns: names.joined(separator: ","), fingerprints: fingerprints,
                                                      expecting: PinFileWriter.Expectation(names: names, pinned: expecting, spki: spki))
        case .removeLines(let lines, let file):
            try TidyFix(file: file).apply(removing: lines)
        }
    }
}
