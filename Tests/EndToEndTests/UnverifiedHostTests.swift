import Foundation
import XCTest
import FleetTrustTestFleet

/// Never quieter than `ssh` by construction, against a hostile server: it presents another key
/// than known_hosts records and signs the exchange with a key it does not present. The real `ssh`
/// compares the presented key with known_hosts before it checks the signature and says CHANGED;
/// our client refuses the signature, so it proves no key. fleettrust must still alarm:
/// `unverified`, exit 2, naming the stage and code. With nothing recorded, the host stays an
/// `error` (exit 1), as before.
final class UnverifiedHostTests: XCTestCase {
    private var lab: ServerLab!
    private var server: FakeKeyServer?

    override func setUpWithError() throws {
        lab = try ServerLab()
    }

    override func tearDown() {
        server?.stop()
        lab?.stop()
    }

    private func scan(knownHosts: String, port: Int) throws -> (ProgramRun, [String: Any]) {
        let inventory = lab.path("hosts.txt"), known = lab.path("known_hosts")
        try "127.0.0.1:\(port)\n".write(toFile: inventory, atomically: true, encoding: .utf8)
        try knownHosts.write(toFile: known, atomically: true, encoding: .utf8)
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--inventory", inventory,
                                                                "--known-hosts", known, "--no-history", "--timeout", "10"])
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any], run.stderrText)
        return (run, try XCTUnwrap((document["hosts"] as? [[String: Any]])?.first))
    }

    func testAServerThatFailsOurClientMidExchangeWhereSSHSaysChangedIsUnverified() throws {
        // Presents the rogue key "ed2", signs with "ed": ssh meets ed2 and compares it first.
        let rogue = FakeHostKey(privateKeyPath: lab.path("ed"), presentedBlob: try KeyFiles.blob(publicKeyFile: lab.path("ed2") + ".pub"),
                                algorithms: ["ssh-ed25519"])
        let server = try FakeKeyServer(keys: [rogue])
        self.server = server
        let name = "[127.0.0.1]:\(server.port)"
        let recorded = "\(name) \(try lab.publicLine("ed"))\n"

        let config = lab.path("ssh_config")
        try """
            Host fake
              HostName 127.0.0.1
              Port \(server.port)
              UserKnownHostsFile \(lab.path("known_hosts"))
              GlobalKnownHostsFile /dev/null

            """.write(toFile: config, atomically: true, encoding: .utf8)
        try recorded.write(toFile: lab.path("known_hosts"), atomically: true, encoding: .utf8)
        let oracle = try SSHOracle.handshake(host: "fake", config: config)
        XCTAssertEqual(oracle.finding, .changed, "the oracle: \(oracle.finalMessage)")

        let (run, host) = try scan(knownHosts: recorded, port: server.port)
        XCTAssertEqual(host["status"] as? String, "unverified", "\(host)")
        XCTAssertEqual(run.status, 2, run.stderrText)
        let error = try XCTUnwrap(host["error"] as? [String: Any], "\(host)")
        XCTAssertEqual(error["stage"] as? String, "key-exchange")
        XCTAssertEqual(error["code"] as? String, "bad-signature")
        XCTAssertTrue((host["reason"] as? String ?? "").contains("the key ssh would meet was not proved"), "\(host)")

        let (fresh, newHost) = try scan(knownHosts: "", port: server.port)
        XCTAssertEqual(newHost["status"] as? String, "error", "nothing recorded: ssh would not compare any key")
        XCTAssertEqual(fresh.status, 1, fresh.stderrText)
    }
}
