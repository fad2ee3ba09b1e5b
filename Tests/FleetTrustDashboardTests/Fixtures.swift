import FleetTrustCore
@testable import FleetTrustDashboard
import XCTest

/// Real public keys (made with ssh-keygen) and small builders for dashboard states.
enum Fixtures {
    static let ed25519 = try! HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICa+KH5Vx9v59VXPMsxNGf4dP8Zd8JjLkSjMzPVMUHCW")
    static let ecdsa = try! HostKey(openSSHLine: "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBHCCYMOtOqtlacIqpVHcoeraRzZarbaZvdkqMAgoY/BIaEnmJ2jWl64VwQ+9PxK01e7NuluEyBNxakPxSHx9Y5Q=")
    static let otherEd25519 = try! HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH6t3Xx4oL4VRJhh4Mmg/35/wjy85lnYtYs/TjdOvnBG")
    /// A host certificate for `ed25519` (ssh-keygen -s CA -h -n host0).
    static let certificateBlob = Base64.decode("AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAIBWy2tH/zWyjprSWNCL5DooygniSJut/joe5su0PjsvYAAAAICa+KH5Vx9v59VXPMsxNGf4dP8Zd8JjLkSjMzPVMUHCWAAAAAAAAAAAAAAACAAAABHRlc3QAAAAJAAAABWhvc3QwAAAAAAAAAAD//////////wAAAAAAAAAAAAAAAAAAADMAAAALc3NoLWVkMjU1MTkAAAAg7OphOcbRl7YEm8ZxJov62tWvKZjGCMLoEZgV4AYOyaQAAABTAAAAC3NzaC1lZDI1NTE5AAAAQPjZ3TwUlMrlpquOVGAUTr89GIeSTQEVSHHI/rC8Hz1BzTT+IHBIcOT/1OxxAZ0aOXRM4ZGZs8fXPbSvuLOLJg0=")!
    /// `ssh-keygen -lf` of `ed25519`.
    static let ed25519Fingerprint = "SHA256:jU/TRNYDFZB+XejVsmFf46t8m0CS+RXuxIGfr+5jCOY"

    static let settings = DashboardSettings(inventoryPath: "inv.txt", knownHostsFiles: ["/tmp/kh"], pinFile: "/tmp/pins",
                                            auditLogPath: "/tmp/audit.jsonl")

    static func hosts(_ count: Int) -> [InventoryHost] {
        (0..<count).map { InventoryHost(name: "host\($0)", address: "10.0.\($0 / 256).\($0 % 256)", port: 2200 + $0 % 3) }
    }

    static func state(hosts count: Int = 5, width: Int = 160, height: Int = 20, readOnly: Bool = false) -> DashboardState {
        var settings = settings
        settings.readOnly = readOnly
        return DashboardState(settings: settings, hosts: hosts(count), size: TerminalSize(width: width, height: height))
    }

    static func result(_ host: InventoryHost, keys: [HostKey] = [ed25519, ecdsa], failure: ProbeFailure? = nil) -> ProbeResult {
        ProbeResult(host: host.name, port: host.port,
                    keys: failure == nil ? keys.map { DiscoveredKey(key: $0, handshakeMilliseconds: 12) } : [],
                    failures: failure.map { [$0] } ?? [], serverVersion: "SSH-2.0-OpenSSH_9.2p1")
    }

    static let oldLine = RecordedLine(location: SourceLocation(file: "/tmp/kh", line: 7),
                                      fingerprint: otherEd25519.sha256Fingerprint, keyType: .ed25519,
                                      text: "[10.0.0.1]:2201 " + otherEd25519.openSSHLine)

    /// The real judge's answer for `result`, against a known_hosts file `/tmp/kh` (held in memory)
    /// whose line 7 makes the host `status`: its key (trusted), another key (changed), a `@revoked`
    /// line (revoked), nothing (new), or a pin on another key (pin-mismatch).
    static func judged(_ host: InventoryHost, _ result: ProbeResult, status: HostStatus) -> JudgedHost {
        let name = LookupName(host: host.address, port: host.port).hostString
        var line = ""
        switch status {
        case .trusted: line = "\(name) \(ed25519.openSSHLine)"
        case .changed: line = "\(name) \(otherEd25519.openSSHLine)"
        case .revoked: line = "@revoked * \(ed25519.openSSHLine)"
        default: break
        }
        let text = String(repeating: "# fixture\n", count: 6) + line + "\n"
        let knownHosts = KnownHosts(files: [KnownHostsFile(path: "/tmp/kh", bytes: Array(text.utf8))])
        let pins = status == .pinMismatch ? try! PinSet.parse(path: "/tmp/pins", bytes: Array("* \(otherEd25519.sha256Fingerprint)\n".utf8)) : nil
        let judged = FleetJudge(knownHosts: knownHosts, pins: pins).judge(host, result)
        precondition(judged.status == status || result.keys.isEmpty, "fixture for \(status) judged \(judged.status)")
        return judged
    }

    /// Delivers a probe result with the given status to host `index`.
    static func probed(_ state: DashboardState, _ index: Int, _ status: HostStatus, keys: [HostKey] = [ed25519, ecdsa]) -> DashboardState {
        let host = state.rows[index].host
        let failure = status == .unreachable ? ProbeFailure(stage: .connect, code: .connectionRefused, message: "connection refused") : nil
        let result = result(host, keys: keys, failure: failure)
        return DashboardUpdate.update(state, .hostsUpdated([HostUpdate(index: index, judged: judged(host, result, status: status),
                                                                       probed: true)])).0
    }

    static func press(_ state: DashboardState, _ keys: Key...) -> (DashboardState, [DashboardEffect]) {
        var state = state
        var effects: [DashboardEffect] = []
        for key in keys {
            let (next, produced) = DashboardUpdate.update(state, .key(key))
            state = next
            effects += produced
        }
        return (state, effects)
    }

    static func type(_ state: DashboardState, _ text: String) -> DashboardState {
        var state = state
        for character in text { state = DashboardUpdate.update(state, .key(.character(character))).0 }
        return state
    }
}
