import FleetTrustCore
@testable import FleetTrustDashboard
import Foundation
import XCTest

final class FleetJudgeAssessorTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "assessor-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func assessor(_ path: String, hosts: [InventoryHost]) -> FleetJudgeAssessor {
        FleetJudgeAssessor(watching: [path], hosts: hosts) {
            FleetJudge(knownHosts: try KnownHosts.read(paths: [path]), pins: nil)
        }
    }

    func testASavedEntryIsSeenOnTheNextAssessmentWithItsFileAndLine() throws {
        let path = directory + "/known_hosts"
        let host = InventoryHost(name: "web", address: "10.0.0.1", port: 2222)
        let result = Fixtures.result(host, keys: [Fixtures.ed25519])
        let assessor = assessor(path, hosts: [host])
        let before = assessor.assess(host, result)
        XCTAssertEqual(before.status, .new)
        XCTAssertEqual(before.knownHostsNames, ["[10.0.0.1]:2222"])
        XCTAssertEqual(before.recordedLines, [])

        try "# comment\n[10.0.0.1]:2222 \(Fixtures.ed25519.openSSHLine)\n".write(toFile: path, atomically: true, encoding: .utf8)
        let after = assessor.assess(host, result)
        XCTAssertEqual(after.status, .trusted)
        XCTAssertEqual(after.method, "known_hosts")
        XCTAssertEqual(after.recordedLines.map(\.location), [SourceLocation(file: path, line: 2)])
        XCTAssertEqual(after.recordedLines.first?.fingerprint, Fixtures.ed25519Fingerprint)
    }

    func testAChangedKeyCarriesTheRecordedLineAndARevokedOneCannotBeTrusted() throws {
        let path = directory + "/known_hosts"
        let host = InventoryHost(name: "web", address: "10.0.0.1")
        try "10.0.0.1 \(Fixtures.otherEd25519.openSSHLine)\n@revoked * \(Fixtures.ecdsa.openSSHLine)\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let changed = assessor(path, hosts: [host]).assess(host, Fixtures.result(host, keys: [Fixtures.ed25519]))
        XCTAssertEqual(changed.status, .changed)
        XCTAssertEqual(changed.keys.first?.recorded.map(\.location), [SourceLocation(file: path, line: 1)])
        XCTAssertEqual(changed.keys.first?.recorded.first?.text, "10.0.0.1 " + Fixtures.otherEd25519.openSSHLine)

        let revoked = assessor(path, hosts: [host]).assess(host, Fixtures.result(host, keys: [Fixtures.ecdsa]))
        XCTAssertEqual(revoked.status, .revoked)
        XCTAssertEqual(revoked.trustBlockedReason, "the key is revoked by @revoked at \(path):2")
    }

    func testAHostWithoutKeysIsUnreachableOrAnErrorByItsFailureStage() {
        let host = InventoryHost(name: "web")
        let refused = ProbeResult(host: "web", port: 22, failures: [ProbeFailure(stage: .connect, code: "connection-refused", message: "refused")])
        XCTAssertEqual(assessor(directory + "/none", hosts: [host]).assess(host, refused).status, .unreachable)
        let kex = ProbeResult(host: "web", port: 22, failures: [ProbeFailure(stage: .keyExchange, code: "kex-failed", message: "no")])
        XCTAssertEqual(assessor(directory + "/none", hosts: [host]).assess(host, kex).status, .error)
    }
}
