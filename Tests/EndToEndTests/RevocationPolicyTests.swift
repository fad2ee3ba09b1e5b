import FleetTrustCore
import FleetTrustDashboard
import FleetTrustTestFleet
import Foundation
import XCTest

/// A revoked key is an alarm under every policy but `off`, against a real `sshd`, in scan JSON
/// and in a replay of it; and connect's exact `ssh` argument vector, run against that server,
/// makes the real `ssh` refuse the key under every policy: the revocation comes from a
/// known_hosts `@revoked` line, or from `RevokedHostKeys` given as an Ansible `-o` option.
final class RevocationPolicyTests: XCTestCase {
    private static let policies = ["standard", "pinned", "pin-only", "ca", "off"]

    func testARevokedPinnedKeyIsRevokedUnderEveryPolicyAndConnectMakesSshRefuseIt() throws {
        let lab = try RevocationLab()
        defer { lab.stop() }
        let name = lab.knownHostsName
        let pins = try lab.write("pins", "web-* \(lab.ed25519.sha256Fingerprint) ca:\(lab.authority.sha256Fingerprint)\n")
        let krl = try lab.krl("revoked", "key: \(lab.ed25519.openSSHLine)\n")
        let scenarios: [(label: String, knownHosts: String, arguments: String, ssh: RevocationLab.Answer)] = [
            ("known_hosts @revoked", "\(name) \(lab.ed25519.openSSHLine)\n@revoked \(name) \(lab.ed25519.openSSHLine)\n", "",
             .revokedByKnownHosts),
            ("RevokedHostKeys", "\(name) \(lab.ed25519.openSSHLine)\n", "ansible_ssh_common_args=\"-o RevokedHostKeys=\(krl)\"",
             .revokedByFile),
        ]
        for (index, scenario) in scenarios.enumerated() {
            let knownHosts = try lab.write("known_hosts_\(index)", scenario.knownHosts)
            let inventory = try lab.write("hosts_\(index).ini", "[fleet]\n" + Self.policies.map { policy in
                "web-\(policy) ansible_host=127.0.0.1 ansible_port=\(lab.port) fleettrust_policy=\(policy) \(scenario.arguments)"
            }.joined(separator: "\n") + "\n")
            let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--no-history", "--inventory", inventory,
                                                                    "--known-hosts", knownHosts, "--pins", pins], limit: 120)
            let hosts = try XCTUnwrap(try? RecordedScan.decode(Data(run.stdout)), run.stderrText).hosts
            XCTAssertEqual(hosts.map(\.policy), Self.policies, scenario.label)
            XCTAssertEqual(hosts.map(\.status), [.revoked, .revoked, .revoked, .revoked, .unchecked], scenario.label)
            XCTAssertEqual(hosts.map(\.method), [nil, nil, nil, nil, nil], "\(scenario.label): nothing is trusted")
            XCTAssertEqual(run.status, 2, scenario.label)

            // The recorded scan, judged again in-process by the one judge, gives connect its hosts.
            let replayed = try ScanReplay.load(Data(run.stdout), source: "scan.json")
            var judge = FleetJudge(knownHosts: try KnownHosts.read(paths: [knownHosts]), pins: try PinSet.read(path: pins))
            judge.revocationLists = RevocationLists.read(hosts: replayed.map(\.host))
            let judged = replayed.map { judge.judge($0.host, $0.result) }
            // A recorded policy may only make a host stricter: the document's `off` does not quieten
            // this machine's answer, so the replay says revoked where the live scan said unchecked.
            XCTAssertEqual(judged.map(\.status), [.revoked, .revoked, .revoked, .revoked, .revoked], "\(scenario.label): the replay agrees, stricter")

            let connect = ConnectCommand(template: "/usr/bin/ssh -F /dev/null -o BatchMode=yes -o PubkeyAuthentication=no "
                                         + "-o PasswordAuthentication=no -o KbdInteractiveAuthentication=no -o ConnectTimeout=10 "
                                         + "{options} -p {port} {target} true", user: "fleettrust-test")
            for host in judged {
                var handed: [String]?
                if let lines = ConnectCommand.policyKnownHosts(for: host) {
                    handed = [try lab.write("connect_\(index)_\(host.policy)", lines)]
                }
                let arguments = try connect.arguments(for: host, knownHosts: handed)
                let (answer, transcript) = try RevocationLab.answer(arguments)
                XCTAssertEqual(answer, scenario.ssh, "\(scenario.label), \(host.policy): \(arguments)\n\(transcript)")
            }

            // The control: without the revocations connect carries, the same ssh accepts the pinned key.
            let pinOnly = try XCTUnwrap(judged.first { $0.policy == "pin-only" })
            let trustedOnly = try lab.write("connect_\(index)_unrevoked", "\(pinOnly.lookup.hostString) \(lab.ed25519.openSSHLine)\n")
            var unrevoked = pinOnly.host
            unrevoked.sshOptions.revokedHostKeys = nil
            let withoutRevocations = JudgedHost(host: unrevoked, labels: pinOnly.labels, lookup: pinOnly.lookup,
                                                knownHostsFiles: pinOnly.knownHostsFiles, probe: pinOnly.probe, status: .trusted,
                                                reason: .pinMatched, keys: pinOnly.keys,
                                                negotiatedAlgorithm: pinOnly.negotiatedAlgorithm, pin: pinOnly.pin, trustedBy: [.pin],
                                                failure: nil, recorded: [], saveFile: "", keySharing: KeySharing(), stricterThanSSH: [])
            let (control, transcript) = try RevocationLab.answer(try connect.arguments(for: withoutRevocations, knownHosts: [trustedOnly]))
            XCTAssertEqual(control, .accepted, "\(scenario.label) control: \(transcript)")
        }
    }
}
