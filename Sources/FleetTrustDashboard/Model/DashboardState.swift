import FleetTrustCore

/// The whole dashboard as one value: what `update` transforms and `view` draws.
public struct DashboardState: Equatable, Sendable {
    public var settings: DashboardSettings
    public var rows: [HostRow]
    /// Indices into `rows` that pass the filters, in display order.
    public private(set) var visible: [Int]
    /// Hosts per status, kept with `visible` so the header does not walk every row on each frame.
    public private(set) var statusCounts: [HostStatus: Int] = [:]
    /// Position of the selection in `visible`.
    public var cursor: Int = 0
    /// First visible position shown at the top of the list.
    public var top: Int = 0
    public var size: TerminalSize
    public var mode: Mode = .list
    public var filterText: String = ""
    public var statusFilter: StatusFilter = .all
    public var sort: SortOrder = .inventory
    public var notice: Notice?
    public var discovery = DiscoveryProgress()
    public var pendingWrites = 0
    public var showMD5 = false
    public var detailScroll = 0
    /// The widest host name and endpoint, in columns, so the list gives names the room they need.
    public let widestName: Int
    public let widestEndpoint: Int

    public init(settings: DashboardSettings, hosts: [InventoryHost], size: TerminalSize) {
        self.settings = settings
        self.rows = hosts.map { HostRow(host: $0) }
        self.widestName = hosts.lazy.map { DisplayWidth.of(CleanText($0.name).value) }.max() ?? 0
        self.widestEndpoint = hosts.lazy.map {
            DisplayWidth.of(CleanText($0.endpointLabel).value + (JudgementWords.routeMark($0.route).map { " " + $0 } ?? ""))
        }.max() ?? 0
        self.visible = Array(rows.indices)
        self.size = size
        self.statusCounts = rows.isEmpty ? [:] : [.pending: rows.count]
    }

    public enum Mode: Equatable, Sendable {
        case list
        case detail
        case help
        case filterInput
        case confirm(Confirmation)
        case quitConfirm
    }

    public var selectedIndex: Int? { visible.indices.contains(cursor) ? visible[cursor] : nil }
    public var selectedRow: HostRow? { selectedIndex.map { rows[$0] } }
    public var markedIndices: [Int] { rows.indices.filter { rows[$0].marked } }

    /// Rows the list area can show: the terminal minus header (3 lines) and status line.
    public var listHeight: Int { max(1, size.height - 4) }

    /// Recomputes `visible` after filters, sort or statuses changed, keeping the selected host selected.
    public mutating func refreshVisible() {
        let selected = selectedIndex
        let needle = Array(filterText.lowercased().utf8)
        var counts: [HostStatus: Int] = [:]
        var result = rows.indices.filter { index in
            let status = rows[index].status
            counts[status, default: 0] += 1
            return statusFilter.admits(rows[index]) && rows[index].keys.matches(needle)
        }
        sort.apply(to: &result, rows: rows)
        visible = result
        statusCounts = counts
        if let selected, let position = visible.firstIndex(of: selected) { cursor = position }
        clampCursor()
    }

    public mutating func clampCursor() {
        cursor = max(0, min(cursor, visible.count - 1))
        if cursor < top { top = cursor }
        if cursor >= top + listHeight { top = cursor - listHeight + 1 }
        top = max(0, min(top, max(0, visible.count - listHeight)))
    }
}

/// Files and switches the dashboard was started with; shown in the header.
public struct DashboardSettings: Equatable, Sendable {
    public var inventoryPath: String
    public var knownHostsFiles: [String]
    public var pinFile: String?
    public var readOnly: Bool
    public var auditLogPath: String
    /// known_hosts files named on the command line that did not exist when the dashboard opened
    /// (most often a typo): the header marks them, since a warning printed before the screen
    /// opened is never seen.
    public var missingKnownHostsFiles: Set<String> = []
    /// `--create`: a trust may create a missing known_hosts file named on the command line.
    public var createsMissingKnownHosts = false
    /// The recorded scan the rows come from (`--replay`): nothing is probed, so rescans are refused.
    public var recording: String?
    /// `--trust-on-first-use` with `--replay`: `t` may save a new host's recorded keys no pin proves.
    public var trustsRecordingOnFirstUse = false

    public init(inventoryPath: String, knownHostsFiles: [String], pinFile: String? = nil, readOnly: Bool = false,
                auditLogPath: String) {
        self.inventoryPath = inventoryPath
        self.knownHostsFiles = knownHostsFiles
        self.pinFile = pinFile
        self.readOnly = readOnly
        self.auditLogPath = auditLogPath
    }
}

/// A message in the status line until the next key; cleaned when made, since it often quotes
/// names and errors from outside. It may span lines (every bad line of a pin file).
public struct Notice: Equatable, Sendable {
    public var text: CleanText
    public var isError: Bool
    /// Hosts (indices into `rows`) the notice says have not answered: it goes when one answers.
    public var untilAnswered: Set<Int> = []

    public init(_ text: String, isError: Bool = false) {
        self.text = CleanText(multiline: text, lineLimit: 400, maxLines: 8)
        self.isError = isError
    }
}

/// How far the current discovery run has come.
public struct DiscoveryProgress: Equatable, Sendable {
    public var total = 0
    public var done = 0
    /// The probe pool's hosts in flight and waiting, when it says (a recording does not).
    public var load: ProbeLoad?
    public var running: Bool { done < total }
}

/// A confirmation the user is looking at.
public enum Confirmation: Equatable, Sendable {
    /// `y` saves these new hosts; `skipped` says which marked hosts were left out and why;
    /// `marked` is how many marked hosts the batch was made from (0: the host on screen alone).
    case trust(items: [DecisionItem], skipped: [String], marked: Int)
    /// A changed key: saving takes typing the host name.
    case replace(item: DecisionItem, typed: String)
    case pin(items: [DecisionItem], marked: Int)
    /// Forgetting a host's lines. A host in alarm (`alarm`: changed, revoked, …) is forgotten only
    /// by typing its name, as a changed key is replaced: forgetting it and then trusting what it
    /// presents is a replace in two steps, and must not be cheaper than one.
    case forget(item: DecisionItem, alarm: HostStatus?, typed: String)

    /// The rows the decision is about.
    public var indices: [Int] {
        switch self {
        case .trust(let items, _, _), .pin(let items, _): return items.map(\.index)
        case .replace(let item, _), .forget(let item, _, _): return [item.index]
        }
    }

    /// The name the person must type to confirm, or nil when `y` confirms.
    public var requiredName: String? {
        switch self {
        case .replace(let item, _): return item.host.name
        case .forget(let item, let alarm, _) where alarm != nil: return item.host.name
        default: return nil
        }
    }

    /// What has been typed towards `requiredName`.
    public var typed: String {
        switch self {
        case .replace(_, let typed), .forget(_, _, let typed): return typed
        default: return ""
        }
    }

    /// The same confirmation with `typed` as the text typed so far.
    func typing(_ typed: String) -> Confirmation {
        switch self {
        case .replace(let item, _): return .replace(item: item, typed: typed)
        case .forget(let item, let alarm, _): return .forget(item: item, alarm: alarm, typed: typed)
        default: return self
        }
    }
}

public enum StatusFilter: String, Equatable, Sendable, CaseIterable {
    case all, attention = "needs attention", new, changed, unreachable, trusted
    case drifted = "drifted since last scan"

    /// Whether the row passes: by its status, or (`drifted`) by its keys' drift.
    public func admits(_ row: HostRow) -> Bool {
        self == .drifted ? row.judged?.drift?.kind.isDrift == true : admits(row.status)
    }

    public func admits(_ status: HostStatus) -> Bool {
        switch self {
        case .all: return true
        case .drifted: return false
        case .attention: return status.needsAttention
        case .new: return status == .new
        case .changed: return status.alarmLevel == 2
        case .unreachable: return status == .unreachable || status == .error
        case .trusted: return status == .trusted
        }
    }

    public var next: StatusFilter {
        let all = StatusFilter.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}

public enum SortOrder: String, Equatable, Sendable, CaseIterable {
    case inventory, status, name, address

    public var next: SortOrder {
        let all = SortOrder.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }

    func apply(to indices: inout [Int], rows: [HostRow]) {
        switch self {
        case .inventory:
            return
        case .status:
            indices.sort { a, b in
                let sa = rows[a].status.severity, sb = rows[b].status.severity
                return sa != sb ? sa < sb : a < b
            }
        case .name:
            indices.sort { a, b in SortOrder.precedes(rows[a].keys.name, a, rows[b].keys.name, b) }
        case .address:
            indices.sort { a, b in SortOrder.precedes(rows[a].keys.address, a, rows[b].keys.address, b) }
        }
    }

    /// Byte order of the keys, then inventory order for equal keys, so sorting is stable.
    static func precedes(_ a: [UInt8], _ indexA: Int, _ b: [UInt8], _ indexB: Int) -> Bool {
        a == b ? indexA < indexB : a.lexicographicallyPrecedes(b)
    }

    /// Lower-cased with every run of digits zero-padded, so `10.0.0.9` sorts before `10.0.0.10`.
    static func naturalKey(_ text: String) -> String {
        var out = ""
        var digits = ""
        for character in text.lowercased() {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            if !digits.isEmpty { out += String(repeating: "0", count: max(0, 10 - digits.count)) + digits; digits = "" }
            out.append(character)
        }
        if !digits.isEmpty { out += String(repeating: "0", count: max(0, 10 - digits.count)) + digits }
        return out
    }

    static func pad(_ n: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, 6 - s.count)) + s
    }
}
