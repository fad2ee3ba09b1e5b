/// known_hosts lines for keys about to be saved, written as `ssh-keyscan` prints them and as
/// `KnownHostsWriter` appends them, so that what `scan`, `discover` and `sync --check` show is
/// what lands in the file.
///
/// Names are lowercased (`ssh` lowercases what it looks up). Hashed, every name gets a line of
/// its own with a fresh salt (`|1|salt|hash`, as `ssh-keyscan -H` and `ssh-keygen -H` write).
/// Plain names share one comma-separated line when none carries a port, and otherwise get a
/// line each (`[host]:port`), as `ssh-keyscan` does.
public enum KnownHostsLines {
    /// The lines recording `key` under `names` (lookup strings: `host` or `[host]:port`). A name
    /// the writer would refuse (empty, whitespace, pattern characters) is refused here too.
    public static func render(_ key: HostKey, names: [String], hashed: Bool) throws -> [String] {
        for name in names where !KnownHostsEdit.isWritableName(name) { throw KnownHostsWriter.Refusal.invalidName(name) }
        let lowered = names.map { String(decoding: KnownHostsPattern.lowercased(Array($0.utf8)), as: UTF8.self) }
        if hashed {
            return try lowered.map { try HashedHostName(hashing: $0).field + " " + key.openSSHLine }
        }
        if lowered.contains(where: { $0.hasPrefix("[") }) {
            return lowered.map { $0 + " " + key.openSSHLine }
        }
        return [lowered.joined(separator: ",") + " " + key.openSSHLine]
    }
}
