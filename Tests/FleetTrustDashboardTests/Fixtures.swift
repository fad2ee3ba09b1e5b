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
                                      fingerprint: otherEd25519.sha256Fingerprint,
                                      text: "[10.0.0.1]:2201 " + otherEd25519.openSSHLine)

    /// An assessment with `status` for every key (changed keys carry the recorded line).
    static func assessment(_ host: InventoryHost, _ result: ProbeResult, status: HostStatus) -> RowAssessment {
        let verdict: KeyVerdict
        switch status {
        case .trusted: verdict = .trusted
        case .changed: verdict = .changed
        case .revoked: verdict = .revoked
        default: verdict = .new
        }
        let keys = result.keys.map {
            KeyAssessment(key: $0, knownHosts: verdict, pin: status == .pinMismatch ? .mismatch : .unpinned,
                          recorded: status == .changed ? [oldLine] : [])
        }
        guard !keys.isEmpty else { return .failed(result.failure) }
        return RowAssessment(status: status, keys: keys, method: status == .trusted ? "known_hosts" : "",
                              knownHostsNames: [knownHostsName(for: host)], knownHostsFile: "/tmp/kh",
                              recordedLines: status == .changed || status == .trusted ? [oldLine] : [],
                              trustBlockedReason: status == .revoked ? "the key is marked @revoked at /tmp/kh:3" : nil)
    }

    /// Delivers a probe result with the given status to host `index`.
    static func probed(_ state: DashboardState, _ index: Int, _ status: HostStatus, keys: [HostKey] = [ed25519, ecdsa]) -> DashboardState {
        let host = state.rows[index].host
        let failure = status == .unreachable ? ProbeFailure(stage: .connect, code: "connection-refused", message: "connection refused") : nil
        let result = result(host, keys: keys, failure: failure)
        return DashboardUpdate.update(state, .hostsUpdated([HostUpdate(index: index, result: result,
                                                                       assessment: assessment(host, result, status: status))])).0
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
