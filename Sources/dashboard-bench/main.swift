import FleetTrustCore
import FleetTrustDashboard
import Foundation

/// Times the dashboard's pure core at fleet scale for `make bench`: first screen, key presses, memory.
///
/// `dashboard-bench INVENTORY KEYS` reads INVENTORY as the dashboard does, draws the first
/// 160x45 screen, gives every host three discovered keys and an assessment (as after a scan), then
/// presses keys through `DashboardUpdate.apply` + `DashboardView.view`. KEYS holds an Ed25519, an
/// ECDSA and an RSA public-key line; each host gets its own copy with its own bytes. Prints JSON.

let start = DispatchTime.now()

func milliseconds(since t0: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - t0.uptimeNanoseconds) / 1e6
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("dashboard-bench: " + message + "\n").utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: dashboard-bench INVENTORY KEYS") }
guard let inventoryBytes = FileManager.default.contents(atPath: arguments[1]) else { fail("cannot read \(arguments[1])") }
guard let keyText = try? String(contentsOfFile: arguments[2], encoding: .utf8) else { fail("cannot read \(arguments[2])") }
let templates = keyText.split(separator: "\n").compactMap { try? HostKey(openSSHLine: $0) }
guard templates.count >= 3 else { fail("\(arguments[2]) needs three public-key lines") }

let inventory = Inventory.read(InventorySource(name: arguments[1], bytes: Array(inventoryBytes)))
let inventoryRead = milliseconds(since: start)
let size = TerminalSize(width: 160, height: 45)
var state = DashboardState(settings: DashboardSettings(inventoryPath: arguments[1], knownHostsFiles: ["~/.ssh/known_hosts"],
                                                       readOnly: true, auditLogPath: "/dev/null"),
                           hosts: inventory.hosts, size: size)
let firstScreen = DashboardView.view(state)
let firstScreenTotal = milliseconds(since: start)
guard firstScreen.lines.count == 45 else { fail("the first screen has \(firstScreen.lines.count) lines") }

/// A copy of `template` with its own storage and, where the format allows, its own last byte.
func variant(_ template: HostKey, _ n: Int) -> HostKey {
    var blob = template.blob
    if template.kind == .ed25519 || template.kind == .rsa { blob[blob.count - 1] ^= UInt8(truncatingIfNeeded: n) }
    blob.append(0)
    blob.removeLast()
    return (try? HostKey(type: template.type, blob: blob)) ?? template
}

let algorithms = NegotiatedAlgorithms(hostKey: "ssh-ed25519", keyExchange: "curve25519-sha256",
                                      cipher: "chacha20-poly1305@openssh.com", mac: "umac-128-etm@openssh.com")

/// The keys host `index` presents: its own copies of the templates.
func presented(_ index: Int) -> [DiscoveredKey] {
    templates.prefix(3).map { DiscoveredKey(key: variant($0, index), algorithms: algorithms, handshakeMilliseconds: 3.5) }
}

/// A known_hosts file as after a real scan: most hosts recorded with their Ed25519 key, every
/// fifth host new, every twentieth recorded with another key (changed).
let knownHostsText = inventory.hosts.enumerated().compactMap { index, host -> String? in
    guard index % 5 != 4, index % 20 != 19 else { return nil }
    let name = LookupName(host: host.address, port: host.port, hostKeyAlias: host.hostKeyAlias).hostString
    let key = index % 20 == 18 ? templates[0] : presented(index)[0].key
    return "\(name) \(key.openSSHLine)"
}.joined(separator: "\n") + "\n"
let judge = FleetJudge(knownHosts: KnownHosts(files: [KnownHostsFile(path: "~/.ssh/known_hosts", bytes: Array(knownHostsText.utf8))]),
                       pins: nil).preparing(for: inventory.hosts)

func scanned(_ index: Int, _ host: InventoryHost) -> HostUpdate {
    guard index % 20 != 19 else {
        let failure = ProbeFailure(stage: .connect, code: .connectionRefused, message: "connection refused")
        return HostUpdate(index: index, judged: judge.judge(host, ProbeResult(host: host.address, port: host.port, failures: [failure])),
                          probed: true)
    }
    let result = ProbeResult(host: host.address, port: host.port, peerAddress: host.address, keys: presented(index),
                             serverVersion: "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3")
    return HostUpdate(index: index, judged: judge.judge(host, result), probed: true)
}

let scanStart = DispatchTime.now()
let updates = inventory.hosts.enumerated().map { scanned($0.offset, $0.element) }
_ = DashboardUpdate.apply(.hostsUpdated(updates), to: &state)
_ = DashboardView.view(state)
let scanApplied = milliseconds(since: scanStart)

/// Each press goes through `apply` and `view`, as the driver's loop does; the screen is kept
/// so the optimizer cannot drop the drawing.
var timings: [String: [Double]] = [:]
var drawnLines = 0
@MainActor func press(_ label: String, _ key: Key, times: Int = 1) {
    for _ in 0..<times {
        let t0 = DispatchTime.now()
        _ = DashboardUpdate.apply(.key(key), to: &state)
        drawnLines += DashboardView.view(state).lines.count
        timings[label, default: []].append(milliseconds(since: t0))
    }
}

for _ in 0..<3 {
    press("j", .character("j"), times: 100)
    press("PgDn", .pageDown, times: 20)
    press("G", .character("G"))
    press("g", .character("g"))
    press("/", .character("/"))
    for character in "host0001" { press("filter char", .character(character)) }
    press("filter Enter", .enter)
    press("/", .character("/"))
    press("filter Esc", .escape)
    press("s", .character("s"), times: 4)
    press("f", .character("f"), times: 6)
}

/// VmHWM, not getrusage: a child started by vfork inherits its parent's ru_maxrss across exec.
func peakResidentMegabytes() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
}

func summary(_ values: [Double]) -> [String: Double] {
    let sorted = values.sorted()
    return ["median_ms": sorted[sorted.count / 2], "max_ms": sorted.last ?? 0, "count": Double(sorted.count)]
}

let report: [String: Any] = [
    "hosts": state.rows.count,
    "inventory_read_ms": inventoryRead,
    "first_screen_ms": firstScreenTotal,
    "first_screen_after_read_ms": firstScreenTotal - inventoryRead,
    "scan_results_ms": scanApplied,
    "keys": timings.mapValues(summary),
    "peak_rss_mb": peakResidentMegabytes(),
    "lines_drawn": drawnLines,
]
let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
FileHandle.standardOutput.write(json + Data("\n".utf8))
