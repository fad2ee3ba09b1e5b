import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// The key-exchange client against the shared test fleet and its misbehaving servers.
final class KeyExchangeFleetTests: XCTestCase {
    private var hostile: [SpawnedProcess] = []

    override func tearDown() {
        hostile.forEach { $0.terminate() }
        hostile = []
    }

    func testFleetCertificateIsFetchedAndSignedByTheFleetCA() throws {
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        let host = fleet.hosts[0]
        let report = KeyExchangeProbe.run(host: host.address, port: host.port,
                                          hostKeyAlgorithms: KeyExchangeProbe.certificateAlgorithms, timeout: 10)
        let found = try report.outcome.get()
        XCTAssertEqual(found.key, host.certificate)
        let certificate = try HostCertificate(found.key)
        XCTAssertEqual(certificate.signatureKey, fleet.caPublicKey)
        XCTAssertEqual(certificate.key, host.key(ofType: "ssh-ed25519"))
        XCTAssertTrue(certificate.principals.contains("host0.fleet.test"))
        XCTAssertTrue(certificate.isSignatureValid)
        XCTAssertEqual(certificate.signatureAlgorithm, "ssh-ed25519")

        let plain = fleet.hosts[1]
        let none = KeyExchangeProbe.run(host: plain.address, port: plain.port,
                                        hostKeyAlgorithms: KeyExchangeProbe.certificateAlgorithms, timeout: 10)
        guard case .failure(let failure) = none.outcome else { return XCTFail("a host without a certificate showed one") }
        XCTAssertEqual(failure.code, .noCommonAlgorithm)
        XCTAssertFalse(none.serverHostKeyAlgorithms.contains { $0.hasSuffix("-cert-v01@openssh.com") })
        XCTAssertTrue(none.serverHostKeyAlgorithms.contains("ssh-ed25519"))
    }

    func testEveryFleetKeyMatchesSshKeygen() throws {
        let fleet = try TestFleet.start(hosts: 2)
        defer { fleet.stop() }
        for host in fleet.hosts {
            for (key, file) in zip(host.publicKeys, host.publicKeyFiles) {
                let algorithm = key.type == "ssh-rsa" ? "rsa-sha2-512" : key.type
                let found = try KeyExchangeProbe.fetchHostKey(host: host.address, port: host.port,
                                                              hostKeyAlgorithms: [algorithm], timeout: 10).get()
                let oracle = try Tool.check("/usr/bin/ssh-keygen", ["-lf", file]).split(separator: " ")
                XCTAssertEqual(found.key.sha256Fingerprint, String(oracle[1]), "\(host.name) \(algorithm)")
                XCTAssertEqual(found.key, key)
            }
        }
    }

    func testMisbehavingServersAreClassifiedByStageAndCode() throws {
        let expected: [(HostileBehavior, ProbeStage, FailureCode)] = [
            (.silent, .banner, .bannerTimeout),
            (.slowBanner, .banner, .bannerTimeout),
            (.preBannerFlood, .banner, .notSSH),
            (.endlessBanner, .banner, .notSSH),
            (.garbageAfterBanner, .keyExchange, .kexFailed),
            (.closeDuringKex, .keyExchange, .connectionClosed),
            (.escapeBanner, .keyExchange, .connectionClosed),
            (.http, .banner, .notSSH),
        ]
        for (behavior, stage, code) in expected {
            let port = try startHostile(behavior)
            let report = KeyExchangeProbe.run(host: "127.0.0.1", port: port,
                                              hostKeyAlgorithms: KeyExchangeProbe.plainAlgorithms, timeout: 2)
            guard case .failure(let failure) = report.outcome else {
                XCTFail("\(behavior.rawValue) was accepted")
                continue
            }
            XCTAssertEqual(failure.stage, stage, "\(behavior.rawValue): \(failure.message)")
            XCTAssertEqual(failure.code, code, "\(behavior.rawValue): \(failure.message)")
            let texts = [failure.message.value] + report.serverPreamble + [report.serverVersion ?? ""]
            for text in texts {
                XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || (0x7f..<0xa0).contains($0.value) },
                               "\(behavior.rawValue): control character in \(text.debugDescription)")
            }
        }
    }

    func testEscapeSequencesInTheIdentificationAreCleaned() throws {
        let port = try startHostile(.escapeBanner)
        let report = KeyExchangeProbe.run(host: "127.0.0.1", port: port, hostKeyAlgorithms: ["ssh-ed25519"], timeout: 2)
        let version = try XCTUnwrap(report.serverVersion)
        XCTAssertTrue(version.hasPrefix("SSH-2.0-Evil?[2J?]52;c;"), version)
        XCTAssertFalse(version.contains("\u{1b}"))
        XCTAssertEqual(report.serverPreamble.count, 2)
        XCTAssertTrue(report.serverPreamble[0].hasPrefix("?[2J?[H?]0;owned title?pre-banner"), report.serverPreamble[0])
    }

    private func startHostile(_ behavior: HostileBehavior) throws -> Int {
        let portFile = FileManager.default.temporaryDirectory.path + "/ft-kex-hostile-\(getpid())-\(behavior.rawValue)"
        defer { unlink(portFile) }
        let process = try SpawnedProcess("/bin/sh", ["-c", "exec \"$0\" hostile --behavior \"$1\" --lifetime 60 > \"$2\"",
                                                     BuiltProducts.testfleet, behavior.rawValue, portFile])
        hostile.append(process)
        for _ in 0..<1000 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
               let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return port
            }
            usleep(20_000)
        }
        throw TestFleetError.toolFailed("hostile server \(behavior.rawValue) did not start")
    }
}
