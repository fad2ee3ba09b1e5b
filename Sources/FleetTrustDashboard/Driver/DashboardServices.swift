import FleetTrustCore
import Synchronization

/// What the dashboard needs from the rest of fleettrust, injected by the command so the
/// dashboard depends on protocols and closures only: the prober, the one judge, the trust
/// store's editor, the connect command and the audit log.
public struct DashboardServices: Sendable {
    public var prober: any FleetProber
    /// Must read the trust stores afresh when they change, so a write is reflected at once.
    public var judge: any HostJudging
    /// Applies a confirmed decision's edits (the same editor `sync` and `tidy --fix` write through).
    public var editor: TrustStoreEditor
    public var connect: ConnectCommand
    /// Nil in `--read-only` mode: nothing is written, not even the audit log.
    public var auditLog: AuditLog?
    public var user: String
    /// Records every probe that proved keys; nil with `--no-history` or `--read-only`.
    public var history: HistoryRecorder?

    public init(prober: any FleetProber, judge: any HostJudging, editor: TrustStoreEditor,
                connect: ConnectCommand, auditLog: AuditLog?, user: String, history: HistoryRecorder? = nil) {
        self.prober = prober
        self.judge = judge
        self.editor = editor
        self.connect = connect
        self.auditLog = auditLog
        self.user = user
        self.history = history
    }
}

/// Where probe workers and writers leave their results for the UI thread, which collects them
/// on its tick.
final class MessageInbox: Sendable {
    private let updates = Mutex<[HostUpdate]>([])
    private let messages = Mutex<[DashboardMessage]>([])

    func post(_ update: HostUpdate) {
        updates.withLock { $0.append(update) }
    }

    func post(_ message: DashboardMessage) {
        messages.withLock { $0.append(message) }
    }

    func drain() -> [HostUpdate] {
        updates.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }

    /// Messages other than host updates (a finished write), in the order posted.
    func drainMessages() -> [DashboardMessage] {
        messages.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }
}
