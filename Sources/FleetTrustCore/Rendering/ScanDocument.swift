/// Rules the scan document's `summary` and the process share.
public enum ScanDocument {
    /// The hosts' exit status, raised to 1 when inventory entries were skipped: a host nobody
    /// checked never vanishes silently (`ScanOutcome.exitStatus`).
    public static func exitStatus(_ hosts: Int32, skipped: [SkippedInventoryEntry]) -> Int32 {
        ScanOutcome.exitStatus(hosts: hosts, skipped: !skipped.isEmpty, recordFailed: false)
    }
}
