import FleetTrustTestFleet
import Foundation
import XCTest

/// A security setting that does not parse refuses the run, always: a mistyped `fleettrust_policy`
/// in any inventory format is exit 64 naming the file, the line, the value and the valid ones,
/// never a host dropped from the scan (exit 1) nor judged under another policy. The real binary;
/// the refusal comes before any probe, so the hosts point at a closed loopback port.
final class PolicyTypoRefusalTests: InventoryScratchTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(atPath: root + "/dir/host_vars", withIntermediateDirectories: true)
    }

    private func assertRefused(_ inventory: String, at place: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for command in [["scan", "--format", "json", "--no-history"], ["sync", "--check"]] {
            let run = try ProgramRun.run(BuiltProducts.fleettrust, command + ["--inventory", inventory, "--known-hosts", root + "/kh"],
                                         limit: 60, environment: ["HOME": root, "XDG_CONFIG_HOME": root, "PATH": "/usr/bin:/bin"])
            let label = "\(command[0]) \(inventory)"
            XCTAssertEqual(run.status, 64, "\(label): \(run.stderrText)", file: file, line: line)
            XCTAssertTrue(run.stdout.isEmpty, "\(label): nothing is scanned", file: file, line: line)
            for word in [place + ":", "fleettrust_policy 'pinnned'", "standard, pinned, pin-only, ca, off", "refuses the run"] {
                XCTAssertTrue(run.stderrText.contains(word), "\(label): \(run.stderrText) lacks \(word)", file: file, line: line)
            }
        }
    }

    func testAMistypedPolicyInHostVarsRefusesTheRunEvenBesideAGoodHost() throws {
        _ = try write("dir/hosts.ini", "[web]\nweb1 ansible_host=127.0.0.1 ansible_port=1\nweb2 ansible_host=127.0.0.1 ansible_port=1\n")
        _ = try write("dir/host_vars/web1.yml", "---\nansible_user: deploy\nfleettrust_policy: pinnned\n")
        try assertRefused(root + "/dir", at: root + "/dir/host_vars/web1.yml:3")
    }

    func testAMistypedPolicyRefusesTheRunInEveryInventoryFormat() throws {
        let ini = try write("hosts.ini", "[web]\nweb1 ansible_host=127.0.0.1 ansible_port=1 fleettrust_policy=pinnned\nweb2 ansible_host=127.0.0.1 ansible_port=1\n")
        try assertRefused(ini, at: ini + ":2")
        let yaml = try write("hosts.yml", """
            all:
              hosts:
                web1:
                  ansible_host: 127.0.0.1
                  ansible_port: 1
                  fleettrust_policy: pinnned
                web2:
                  ansible_host: 127.0.0.1

            """)
        try assertRefused(yaml, at: yaml + ":3")
        let json = try write("hosts.json", """
            {"all": {"hosts": {"web1": {"ansible_host": "127.0.0.1", "ansible_port": 1, "fleettrust_policy": "pinnned"},
                               "web2": {"ansible_host": "127.0.0.1"}}}}

            """)
        try assertRefused(json, at: json + ":1")
    }
}
