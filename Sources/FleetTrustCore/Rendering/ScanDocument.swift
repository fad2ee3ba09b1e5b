/// Rules the scan document's `summary` and the process share.
public enum ScanDocument {
    /// The hosts' exit status, raised to 1 when inventory entries were skipped: a host nobody
    /// checked never vanishes silently.
    public static func exitStatus(_ hosts: Int32, skipped: [SkippedInventoryEntry]) -> Int32 {
        skipped.isEmpty ? hosts : max(hosts, 1)
    }
}
