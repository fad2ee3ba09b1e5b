import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// The known_hosts connect hands `ssh` for a pin-only host lives in a private directory that
/// `mkdtemp` made (0700, a name no other user can guess or create first), holds a 0600 file, and
/// is gone once `ssh` has returned.
final class ConnectPrivateKnownHostsTests: XCTestCase {
    private var fleet: TestFleet!
    private var scratch = ""
    private var terminal: DashboardTmux?

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "ft-connect-private-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: scratch + "/tmp", withIntermediateDirectories: true)
        fleet = try TestFleet.start(hosts: 1)
    }

    override func tearDown() {
        terminal?.stop()
        fleet?.stop()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    private func write(_ file: String, _ text: String) throws -> String {
        let path = scratch + "/" + file
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testPinOnlyConnectHandsSshAPrivateKnownHostsRemovedAfterwards() throws {
        let host = try XCTUnwrap(fleet.hosts.first)
        let key = try XCTUnwrap(host.key(ofType: "ssh-ed25519"))
        let pins = try write("pins", "\(host.knownHostsName) \(key.sha256Fingerprint)\n")
        let policy = try write("policy", "\(host.knownHostsName) pin-only\n")
        let log = scratch + "/connect.log"
        let wrapper = try write("connect.sh", """
            #!/bin/sh
            for a in "$@"; do case "$a" in UserKnownHostsFile=*) f="${a#UserKnownHostsFile=}";; esac; done
            f=$(printf '%s' "$f" | tr -d '"')
            { echo "file=$f"; stat -c '%a %u %F' "$(dirname "$f")" "$f"; cat "$f"; } > '\(log)' 2>&1
            """)
        chmod(wrapper, 0o755)
        let terminal = try DashboardTmux(arguments: ["--inventory", fleet.inventoryPath, "--known-hosts", scratch + "/known_hosts",
                                                     "--audit-log", scratch + "/audit.jsonl", "--pins", pins, "--policy", policy,
                                                     "--connect-command", "\(wrapper) {options} -p {port} {host}"],
                                         width: 200, environment: ["TMPDIR": scratch + "/tmp"])
        self.terminal = terminal
        XCTAssertTrue(terminal.waitFor { !$0.contains("scanning") && $0.contains("T trusted") }.0, terminal.capture())
        terminal.send("c")
        XCTAssertTrue(terminal.waitFor { $0.contains("exited with status 0") }.0, terminal.capture())

        let transcript = try String(contentsOfFile: log, encoding: .utf8)
        let lines = transcript.split(separator: "\n").map(String.init)
        let file = try XCTUnwrap(lines.first?.dropFirst("file=".count)).description
        let directory = (file as NSString).deletingLastPathComponent
        XCTAssertTrue(directory.hasPrefix(scratch + "/tmp/fleettrust-connect-"), transcript)
        XCTAssertNil(directory.range(of: #"-\d+-\d+$"#, options: .regularExpression), "not a pid-and-index name: \(transcript)")
        XCTAssertEqual(lines.dropFirst().prefix(2), ["700 \(geteuid()) directory", "600 \(geteuid()) regular file"], transcript)
        XCTAssertTrue(transcript.contains("\(host.knownHostsName) \(key.openSSHLine)"), transcript)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "the private directory is removed after ssh returns")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch + "/tmp"), [])
    }
}
