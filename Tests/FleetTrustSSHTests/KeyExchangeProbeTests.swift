import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

final class KeyExchangeProbeTests: XCTestCase {
    /// One sshd for the whole class: certificates for Ed25519 (Ed25519 CA), ECDSA P-256 (RSA CA,
    /// rsa-sha2-512) and RSA 3072 (ECDSA P-384 CA); plain ECDSA P-384 and P-521 keys.
    nonisolated(unsafe) private static var sshd: KeyExchangeTestSSHD?

    override class func setUp() {
        sshd = try? KeyExchangeTestSSHD(keys: [
            .init(type: "ed25519", bits: "256", certificateCA: ("ed25519", "256", nil)),
            .init(type: "ecdsa", bits: "256", certificateCA: ("rsa", "2048", "rsa-sha2-512")),
            .init(type: "rsa", bits: "3072", certificateCA: ("ecdsa", "384", nil)),
            .init(type: "ecdsa", bits: "384", certificateCA: nil),
            .init(type: "ecdsa", bits: "521", certificateCA: nil),
        ])
    }

    override class func tearDown() {
        sshd?.stop()
        sshd = nil
    }

    private func server() throws -> KeyExchangeTestSSHD { try XCTUnwrap(Self.sshd, "sshd did not start") }

    private func fetch(_ algorithms: [String], port: Int, timeout: Double = 10) -> KeyExchangeReport {
        KeyExchangeProbe.run(host: "127.0.0.1", port: port, hostKeyAlgorithms: algorithms, timeout: timeout)
    }

    func testFetchedHostCertificateIsExactlyTheServersCertificateFile() throws {
        let sshd = try server()
        for (algorithm, index) in [("ssh-ed25519-cert-v01@openssh.com", 0), ("ecdsa-sha2-nistp256-cert-v01@openssh.com", 1),
                                   ("rsa-sha2-512-cert-v01@openssh.com", 2), ("rsa-sha2-256-cert-v01@openssh.com", 2)] {
            let report = fetch([algorithm], port: sshd.port)
            let found = try report.outcome.get()
            XCTAssertEqual(found.key, try sshd.certificate(index), algorithm)
            XCTAssertEqual(found.algorithms?.hostKey, algorithm)
            XCTAssertEqual(found.algorithms?.keyExchange, "curve25519-sha256")
            let certificate = try HostCertificate(found.key)
            XCTAssertEqual(certificate.key, try sshd.publicKey(index))
            XCTAssertEqual(certificate.signatureKey, try sshd.caPublicKey(index))
            XCTAssertEqual(certificate.principals, ["web.example", "127.0.0.1"])
            XCTAssertEqual(certificate.serial, UInt64(100 + index))
            XCTAssertEqual(certificate.keyID, "host\(index)-id")
            XCTAssertEqual(certificate.role, .host)
            XCTAssertTrue(certificate.isSignatureValid)
            XCTAssertEqual(report.peerAddress, "127.0.0.1")
            XCTAssertTrue(report.serverVersion?.hasPrefix("SSH-2.0-OpenSSH_") ?? false)
        }
    }

    func testFetchedPlainKeysHaveTheFingerprintsOfSshKeygen() throws {
        let sshd = try server()
        for (algorithm, index) in [("ssh-ed25519", 0), ("ecdsa-sha2-nistp256", 1), ("rsa-sha2-512", 2), ("rsa-sha2-256", 2),
                                   ("ecdsa-sha2-nistp384", 3), ("ecdsa-sha2-nistp521", 4)] {
            let found = try fetch([algorithm], port: sshd.port).outcome.get()
            let oracle = try Tool.check("/usr/bin/ssh-keygen", ["-lf", sshd.keyPaths[index] + ".pub"]).split(separator: " ")
            XCTAssertEqual(found.key.sha256Fingerprint, String(oracle[1]), algorithm)
            XCTAssertEqual(found.key, try sshd.publicKey(index))
            XCTAssertEqual(found.algorithms?.hostKey, algorithm)
        }
    }

    func testFirstOfferedAlgorithmTheServerSupportsWins() throws {
        let sshd = try server()
        let found = try fetch(["ecdsa-sha2-nistp521-cert-v01@openssh.com", "ecdsa-sha2-nistp384", "ssh-ed25519"],
                              port: sshd.port).outcome.get()
        XCTAssertEqual(found.algorithms?.hostKey, "ecdsa-sha2-nistp384")
        XCTAssertEqual(found.key, try sshd.publicKey(3))
    }

    func testReportListsTheServersHostKeyAlgorithms() throws {
        let sshd = try server()
        let report = fetch(["ssh-ed25519"], port: sshd.port)
        for offered in ["ssh-ed25519-cert-v01@openssh.com", "ecdsa-sha2-nistp256-cert-v01@openssh.com",
                        "rsa-sha2-512-cert-v01@openssh.com", "ssh-ed25519", "ecdsa-sha2-nistp521", "rsa-sha2-256"] {
            XCTAssertTrue(report.serverHostKeyAlgorithms.contains(offered), offered)
        }
        XCTAssertFalse(report.serverHostKeyAlgorithms.contains("ecdsa-sha2-nistp521-cert-v01@openssh.com"))
    }

    func testAlgorithmTheServerLacksFailsWithNoCommonAlgorithm() throws {
        let sshd = try server()
        for request in [["ecdsa-sha2-nistp521-cert-v01@openssh.com"], ["ssh-rsa"], ["ssh-dss"]] {
            let report = fetch(request, port: sshd.port)
            guard case .failure(let failure) = report.outcome else { return XCTFail("\(request) succeeded") }
            XCTAssertEqual(failure.code, .noCommonAlgorithm, "\(request)")
            XCTAssertEqual(failure.stage, .keyExchange)
        }
    }

    func testLegacyAlgorithmsOfAnOlderServerNegotiate() throws {
        let legacy = try KeyExchangeTestSSHD(
            keys: [.init(type: "rsa", bits: "2048", certificateCA: ("ed25519", "256", nil))],
            extraConfig: ["KexAlgorithms curve25519-sha256@libssh.org", "HostKeyAlgorithms ssh-rsa,ssh-rsa-cert-v01@openssh.com",
                          "Ciphers aes256-gcm@openssh.com", "MACs hmac-sha2-512"])
        defer { legacy.stop() }
        let plain = try fetch(KeyExchangeProbe.plainAlgorithms + ["ssh-rsa"], port: legacy.port).outcome.get()
        XCTAssertEqual(plain.key, try legacy.publicKey(0))
        XCTAssertEqual(plain.algorithms, NegotiatedAlgorithms(hostKey: "ssh-rsa", keyExchange: "curve25519-sha256@libssh.org",
                                                              cipher: "aes256-gcm@openssh.com", mac: "<implicit>"))
        let certificate = try fetch(["ssh-rsa-cert-v01@openssh.com"], port: legacy.port).outcome.get()
        XCTAssertEqual(certificate.key, try legacy.certificate(0))
        guard case .failure(let failure) = fetch(KeyExchangeProbe.plainAlgorithms, port: legacy.port).outcome else {
            return XCTFail("negotiated an algorithm the server does not offer")
        }
        XCTAssertEqual(failure.code, .noCommonAlgorithm)
    }

    func testCorrectFakeServerIsAcceptedWithItsPreambleKept() throws {
        let fake = try HostileSSHServer(mode: "honest")
        defer { fake.stop() }
        let report = fetch(KeyExchangeProbe.plainAlgorithms, port: fake.port)
        XCTAssertEqual(try report.outcome.get().key, fake.hostKey)
        XCTAssertEqual(report.serverVersion, "SSH-2.0-Hostile_1.0")
        XCTAssertEqual(report.serverPreamble, ["hello operator"])
    }

    func testSignatureOverTheWrongHashIsRejected() throws {
        try assertFailure(mode: "forge", stage: .keyExchange, code: .badSignature)
    }

    func testSignatureByAnotherKeyThanPresentedIsRejected() throws {
        try assertFailure(mode: "swap", stage: .keyExchange, code: .badSignature)
    }

    func testSilentListenerTimesOutAtTheBanner() throws {
        try assertFailure(mode: "silent", stage: .banner, code: .bannerTimeout, timeout: 1)
    }

    func testWebServerIsNotSSH() throws {
        let failure = try assertFailure(mode: "http", stage: .banner, code: .notSSH)
        XCTAssertTrue(failure?.message.value.contains("HTTP/1.0 400 Bad Request") ?? false, failure?.message.value ?? "")
    }

    func testEndlessTextBeforeTheIdentificationIsCutOff() throws {
        let failure = try assertFailure(mode: "flood", stage: .banner, code: .notSSH)
        XCTAssertTrue(failure?.message.value.contains("xxxx") ?? false, failure?.message.value ?? "")
    }

    func testProtocolOneServerIsNotAccepted() throws {
        let failure = try assertFailure(mode: "ssh1", stage: .banner, code: .notSSH)
        XCTAssertTrue(failure?.message.value.contains("1.5") ?? false, failure?.message.value ?? "")
    }

    func testServerStallingAfterItsKexInitTimesOutInTheKeyExchange() throws {
        try assertFailure(mode: "stall", stage: .keyExchange, code: .kexTimeout, timeout: 1)
    }

    func testOversizedPacketIsRefusedWithoutReadingIt() throws {
        try assertFailure(mode: "oversize", stage: .keyExchange, code: .kexFailed)
    }

    func testAllZeroX25519ValueIsRejected() throws {
        try assertFailure(mode: "zero-point", stage: .keyExchange, code: .kexFailed)
    }

    func testServerDisconnectReasonIsReportedCleaned() throws {
        let failure = try assertFailure(mode: "disconnect", stage: .keyExchange, code: .kexFailed)
        XCTAssertEqual(failure?.message.value, "the server disconnected: no matching host key type?[2J")
    }

    func testClosedPortIsRefused() throws {
        let report = fetch(["ssh-ed25519"], port: try Loopback.freePort())
        guard case .failure(let failure) = report.outcome else { return XCTFail("succeeded") }
        XCTAssertEqual(failure.stage, .connect)
        XCTAssertEqual(failure.code, .connectionRefused)
    }

    func testAdoptedDescriptorIsUsedAndLeftOpen() throws {
        let sshd = try server()
        let fd = try connectedSocket(port: sshd.port)
        defer { close(fd) }
        let found = try KeyExchangeProbe.run(host: "ignored.invalid", port: 1, hostKeyAlgorithms: ["ssh-ed25519"],
                                             timeout: 10, fd: fd).outcome.get()
        XCTAssertEqual(found.key, try sshd.publicKey(0))
        XCTAssertNotEqual(fcntl(fd, F_GETFD), -1)
    }

    func testShutdownFromAnotherThreadEndsAStuckExchange() throws {
        let silent = try HostileSSHServer(mode: "silent")
        defer { silent.stop() }
        let fd = try connectedSocket(port: silent.port)
        defer { close(fd) }
        // Shut the socket down only once this thread is blocked waiting for the silent server.
        let exchanging = try ThreadsWaitingOnIO.currentThread()
        let shutter = Thread {
            ThreadsWaitingOnIO.waitUntil("the exchange blocks on the silent server") { ThreadsWaitingOnIO.isWaiting(exchanging) }
            shutdown(fd, Int32(SHUT_RDWR))
        }
        shutter.start()
        let start = ContinuousClock.now
        let report = KeyExchangeProbe.run(host: "127.0.0.1", port: silent.port, hostKeyAlgorithms: ["ssh-ed25519"],
                                          timeout: 60, fd: fd)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(30), "the shutdown did not end the blocked exchange (60 s timeout)")
        guard case .failure(let failure) = report.outcome else { return XCTFail("succeeded") }
        XCTAssertEqual(failure.code, .connectionClosed)
        XCTAssertEqual(failure.stage, .banner)
    }

    @discardableResult
    private func assertFailure(mode: String, stage: ProbeStage, code: FailureCode, timeout: Double = 10,
                               file: StaticString = #filePath, line: UInt = #line) throws -> ProbeFailure? {
        let fake = try HostileSSHServer(mode: mode)
        defer { fake.stop() }
        let report = fetch(KeyExchangeProbe.plainAlgorithms, port: fake.port, timeout: timeout)
        guard case .failure(let failure) = report.outcome else {
            XCTFail("\(mode) server was accepted", file: file, line: line)
            return nil
        }
        XCTAssertEqual(failure.stage, stage, failure.message.value, file: file, line: line)
        XCTAssertEqual(failure.code, code, failure.message.value, file: file, line: line)
        return failure
    }

    private func connectedSocket(port: Int) throws -> Int32 {
        guard let fd = Loopback.connectedSocket(port: port) else { throw TestServerError.didNotStart("connect to \(port)") }
        return fd
    }
}
