/// The one rule for how loud a run ends, shared by every command and output that states it:
/// `scan` and its replay, `merge`'s summary, `verify`, `sync`, the scan document's `summary`
/// and Prometheus' per-host alarm level. Written once so that no output can be quieter than the
/// process (a reverted key counted by the exit status but not by a dashboard's alert, say).
///
/// 0 nothing to do, 1 look at it, 2 alarm. A host's level is its status's `alarmLevel`, raised to
/// 2 when it presents again a key it had replaced (`reverted` drift: an intermittent man in the
/// middle looks exactly like that); other drift changes nothing (a key `ssh` does not know is
/// already `changed`). A run's is its loudest host's, raised to 1 when an inventory entry was
/// skipped (a host nobody checked never vanishes silently) or the history could not record it.
public enum ExitStatusRule {
    /// A host's level from its judged status and its drift.
    public static func host(status: HostStatus, drift: DriftKind?) -> Int32 {
        max(status.alarmLevel, drift == .reverted ? 2 : 0)
    }

    public static func host(_ judged: JudgedHost) -> Int32 {
        host(status: judged.status, drift: judged.drift?.kind)
    }

    /// The loudest of these hosts' levels (0 for none).
    public static func hosts(_ judged: some Sequence<JudgedHost>) -> Int32 {
        judged.map(host).max() ?? 0
    }

    /// The run's exit status from its loudest host's level.
    public static func run(hosts: Int32, skipped: Bool, recordFailed: Bool = false) -> Int32 {
        skipped || recordFailed ? max(hosts, 1) : hosts
    }
}
