import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// OpenSSH's transport rules at their limits (identification and preamble, name-lists,
/// kex-strict, the skipped guess, unexpected messages), each against a hostile fake server with
/// the real `ssh` as the oracle on the same server: our client proves the server's key exactly
/// when `ssh` reaches and accepts it, and fails exactly when `ssh` refuses the transport.
final class TransportRuleTests: XCTestCase {
    /// `because`: words our client's failure must give (the rule that refused, not another).
    private func compare(mode: String, sshAccepts: Bool, because: String? = nil,
                         file: StaticString = #filePath, line: UInt = #line) throws {
        let server = try HostileSSHServer(mode: mode)
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-transport-\(getpid())-\(mode)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let knownHosts = directory.appendingPathComponent("known_hosts").path
        try "[127.0.0.1]:\(server.port) \(server.hostKey.openSSHLine)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("ssh_config").path
        try "Host hostile\n  HostName 127.0.0.1\n  Port \(server.port)\n  UserKnownHostsFile \(knownHosts)\n  GlobalKnownHostsFile /dev/null\n"
            .write(toFile: config, atomically: true, encoding: .utf8)

        let ssh = try SSHOracle.handshake(host: "hostile", config: config)
        XCTAssertEqual(ssh.finding == .accepted, sshAccepts, "\(mode): ssh \(ssh.finding) (\(ssh.finalMessage))", file: file, line: line)
        let ours = KeyExchangeProbe.run(host: "127.0.0.1", port: server.port, hostKeyAlgorithms: ["ssh-ed25519"], timeout: 10).outcome
        switch ours {
        case .success(let found):
            XCTAssertTrue(sshAccepts, "\(mode): ours proved a key where ssh refused (\(ssh.finalMessage))", file: file, line: line)
            XCTAssertEqual(found.key, server.hostKey, "\(mode): ours met another key than ssh", file: file, line: line)
        case .failure(let failure):
            XCTAssertFalse(sshAccepts, "\(mode): ours failed (\(failure.message)) where ssh accepted", file: file, line: line)
            if let because { XCTAssertTrue(failure.message.value.contains(because), "\(mode): \(failure.message)", file: file, line: line) }
        }
    }

    func testAnIdentificationOf8008BytesIsReadAsSshReadsIt() throws {
        try compare(mode: "long-ident", sshAccepts: true)
    }

    func testTheIdentificationMayFollow1023LinesButNot1024() throws {
        try compare(mode: "preamble-1023", sshAccepts: true)
        try compare(mode: "preamble-1024", sshAccepts: false, because: "does not speak SSH")
    }

    func testANameListEndsAtItsFirstEmptyElementAndAfterFortyNames() throws {
        try compare(mode: "kex-empty-element", sshAccepts: false, because: "no common key exchange")
        try compare(mode: "kex-41", sshAccepts: false, because: "no common key exchange")
    }

    func testANameListMayEndInOneNULByteButHoldNoneInside() throws {
        try compare(mode: "kex-trailing-nul", sshAccepts: true)
        try compare(mode: "kex-inner-nul", sshAccepts: false, because: "contains a NUL byte")
    }

    func testStrictKeyExchangeRefusesAnyPacketOutsideTheExchangeAsSshDoes() throws {
        try compare(mode: "strict", sshAccepts: true)
        try compare(mode: "strict-noise", sshAccepts: false, because: "KEXINIT was not the first packet")
        try compare(mode: "strict-late-noise", sshAccepts: false, because: "strict KEX violation: unexpected packet type 2")
    }

    func testAWronglyGuessedDecoyReplyIsSkippedAndTheRealReplyRead() throws {
        try compare(mode: "decoy", sshAccepts: true)
    }

    func testEachDirectionNeedsAMACInCommonUnlessItsCipherAuthenticates() throws {
        try compare(mode: "no-incoming-mac", sshAccepts: false, because: "no common MAC")
    }

    func testNothingMayFollowTheSignatureOfTheReply() throws {
        try compare(mode: "reply-trailing", sshAccepts: false, because: "bytes after the signature")
    }

    func testDiffieHellmanGroupsAndValuesAreCheckedAsSshChecksThem() throws {
        try compare(mode: "gex", sshAccepts: true)
        try compare(mode: "gex-small-group", sshAccepts: false, because: "group of 1024 bits is outside 2048-8192")
        try compare(mode: "dh-f-one", sshAccepts: false, because: "DH public value is invalid")
        try compare(mode: "dh-padded-f", sshAccepts: true)
        try compare(mode: "gex-padded-f", sshAccepts: true)
    }

    func testAnUnknownTransportMessageAndASecondKexInitAreSkipped() throws {
        try compare(mode: "odd-message", sshAccepts: true)
        try compare(mode: "late-kexinit", sshAccepts: true)
        try compare(mode: "high-message", sshAccepts: false, because: "unexpected message 60")
    }

    /// sshkey.c bounds no certificate field: a host certificate of over 16 KiB (its key id) from a
    /// `@revoked` CA is read, proved and revoked, as `ssh` revokes it.
    func testAHostCertificateOverSixteenKiBIsFetchedAndItsRevokedCAIsSshsVerdictToo() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-bigcert-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("host").path, ca = directory.appendingPathComponent("ca").path
        try KeyFiles.generate(type: "ed25519", path: key)
        try KeyFiles.generate(type: "ed25519", path: ca)
        let certificate = try KeyFiles.certify(publicKeyPath: key + ".pub", caPath: ca, identity: String(repeating: "k", count: 20_000),
                                               principals: ["127.0.0.1"], output: directory.appendingPathComponent("big-cert.pub").path)
        let server = try FakeKeyServer(keys: [try FakeHostKey.certificate(key, certificatePath: certificate,
                                                                           algorithms: ["ssh-ed25519-cert-v01@openssh.com"])])
        defer { server.stop() }
        let presented = try HostKey(openSSHLine: try KeyFiles.line(publicKeyFile: certificate))
        XCTAssertGreaterThan(presented.blob.count, 16 * 1024)

        let found = try KeyExchangeProbe.run(host: "127.0.0.1", port: server.port,
                                             hostKeyAlgorithms: ["ssh-ed25519-cert-v01@openssh.com"], timeout: 10).outcome.get()
        XCTAssertEqual(found.key, presented)
        XCTAssertEqual(try HostCertificate(found.key).keyID.count, 20_000)

        let knownHosts = directory.appendingPathComponent("known_hosts").path
        try "@revoked * \(try KeyFiles.line(publicKeyFile: ca + ".pub"))\n@cert-authority * \(try KeyFiles.line(publicKeyFile: ca + ".pub"))\n"
            .write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("ssh_config").path
        try "Host big\n  HostName 127.0.0.1\n  Port \(server.port)\n  UserKnownHostsFile \(knownHosts)\n  GlobalKnownHostsFile /dev/null\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let ssh = try SSHOracle.handshake(host: "big", config: config,
                                          extraOptions: ["HostKeyAlgorithms=ssh-ed25519-cert-v01@openssh.com"])
        XCTAssertEqual(ssh.finding, .revoked, ssh.finalMessage)
    }
}
