import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `verify` and `scan` read the same default known_hosts files (OpenSSH's four, one list in Core),
/// so they cannot disagree about a key that only a global file (/etc/ssh/ssh_known_hosts*) records.
/// The global files are a scratch directory bind-mounted over /etc/ssh in a private mount
/// namespace (`unshare -m`), and the home directory is an empty tmpfs there: nothing is written to
/// /etc, and the machine's own files play no part.
final class DefaultKnownHostsAgreementTests: XCTestCase {
    func testVerifyAndScanAgreeOnKeysFoundOnlyInTheGlobalDefaultFiles() throws {
        try XCTSkipIf(getuid() != 0 || !FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "needs root and unshare for a private mount namespace")
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        let (trusted, changed) = (fleet.hosts[0], fleet.hosts[1])
        let etc = fleet.directory + "/etc-ssh", state = fleet.directory + "/state"
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        try trusted.publicKeys.map { "\(trusted.knownHostsName) \($0.openSSHLine)\n" }.joined()
            .write(toFile: etc + "/ssh_known_hosts", atomically: true, encoding: .utf8)
        try "\(changed.knownHostsName) \(try TestFleet.throwawayKey(in: fleet.directory).openSSHLine)\n"
            .write(toFile: etc + "/ssh_known_hosts2", atomically: true, encoding: .utf8)
        let home = String(cString: getpwuid(getuid())!.pointee.pw_dir)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = state
        environment["XDG_STATE_HOME"] = state
        func isolated(_ arguments: [String]) throws -> ProgramRun {
            let script = "mount --bind \"$1\" /etc/ssh && mount -t tmpfs tmpfs \"$2\" && shift 2 && exec \"$@\""
            return try ProgramRun.run("/usr/bin/unshare", ["-m", "/bin/sh", "-c", script, "sh", etc, home, BuiltProducts.fleettrust] + arguments,
                                      limit: 60, environment: environment)
        }
        var verdicts: [String: String] = [:]
        for host in [trusted, changed] {
            let run = try isolated(["verify", "--json", "--port", String(host.port), host.address, host.publicKeyFiles[0]])
            let object = try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any]
            verdicts[host.knownHostsName] = object?["verdict"] as? String
        }
        XCTAssertEqual(verdicts, [trusted.knownHostsName: "trusted", changed.knownHostsName: "changed"],
                       "verify reads /etc/ssh/ssh_known_hosts and ssh_known_hosts2 by default")
        let scan = try isolated(["scan", "--format", "json", "--no-history", "--inventory", fleet.inventoryPath])
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(scan.stdout)) as? [String: Any], scan.stderrText)
        let hosts = try XCTUnwrap(document["hosts"] as? [[String: Any]])
        var statuses: [String: String] = [:]
        for host in hosts {
            let name = try XCTUnwrap(host["known_hosts_name"] as? String)
            statuses[name] = host["status"] as? String
        }
        XCTAssertEqual(statuses, verdicts, "scan judges against the same default files as verify")
        XCTAssertEqual(scan.status, 2, "a changed key is an alarm")
    }
}
