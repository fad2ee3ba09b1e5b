import Foundation
import XCTest
@testable import FleetTrustCore

/// `KexAlgorithms` as `ssh` 9.2 reads and applies it (checked against `ssh -G -o KexAlgorithms=…`),
/// and the judge's rule for a key exchange no method could be agreed for: shared with `ssh` only
/// when `ssh`'s own offer for the host has nothing in common with the server's list.
final class KeyExchangeOfferTests: XCTestCase {
    private func hosts(_ text: String) -> Inventory { InventoryFixtures.read(text: text, name: "cfg", format: .sshConfig) }

    func testKexAlgorithmsReplacesAppendsRemovesAndPrependsAsSSHMinusGPrintsIt() {
        let defaults = KeyExchangeAlgorithms.openSSHDefault
        XCTAssertEqual(KeyExchangeAlgorithms.offered(nil), defaults)
        XCTAssertEqual(KeyExchangeAlgorithms.offered("+diffie-hellman-group14-sha1"), defaults + ["diffie-hellman-group14-sha1"])
        XCTAssertEqual(KeyExchangeAlgorithms.offered("^diffie-hellman-group14-sha1"), ["diffie-hellman-group14-sha1"] + defaults)
        XCTAssertEqual(KeyExchangeAlgorithms.offered("-*"), [], "ssh -G prints an empty list, and ssh fails every exchange")
        XCTAssertEqual(KeyExchangeAlgorithms.offered("-foo"), defaults, "an unknown name in a removal is ignored")
        XCTAssertEqual(KeyExchangeAlgorithms.offered("-sntrup*,diffie-hellman-*"), Array(defaults[2...6]))
        XCTAssertEqual(KeyExchangeAlgorithms.offered("curve25519-sha256,,ecdh-sha2-nistp256"), ["curve25519-sha256", "ecdh-sha2-nistp256"])
    }

    func testKexAlgorithmsSSHRefusesAreFileLineErrorsAndTheHostUnjudged() {
        let inventory = hosts("""
        Host wild
          KexAlgorithms +curve*
        Host unknown
          KexAlgorithms ^foo
        Host old
          KexAlgorithms +diffie-hellman-group14-sha1
        Host none
          KexAlgorithms -*
        """)
        XCTAssertEqual(inventory.errors.map(\.description), [
            "cfg:2: KexAlgorithms '+curve*' names no algorithm OpenSSH 9.2 knows ('curve*'); ignored",
            "cfg:4: KexAlgorithms '^foo' names no algorithm OpenSSH 9.2 knows ('foo'); ignored",
        ])
        XCTAssertEqual(inventory["wild"]?.sshOptions.unjudged?.map(\.keyword), ["KexAlgorithms"])
        XCTAssertEqual(inventory["old"]?.sshOptions.kexAlgorithms, "+diffie-hellman-group14-sha1")
        XCTAssertEqual(inventory["old"]?.sshOptions.commandLineOptions, ["-o", "KexAlgorithms=+diffie-hellman-group14-sha1"])
        XCTAssertEqual(inventory["none"]?.sshOptions.kexAlgorithms?.form, .remove)
    }

    // MARK: the judge

    private func judge(_ probe: ProbeResult, kex: SSHAlgorithmList? = nil) throws -> JudgedHost {
        let ed = try JudgeFixtures.key("precedence", "ed")
        var host = InventoryHost(name: "web")
        host.sshOptions.kexAlgorithms = kex
        let files = KnownHosts(files: [TestKeys.file("web \(ed.openSSHLine)\n", path: "/home/u/.ssh/known_hosts")])
        return FleetJudge(knownHosts: files, pins: nil, policies: PolicyResolver()).judge(host, probe, now: JudgeFixtures.now)
    }

    private func noCommonKeyExchange(serverOffers methods: [String]?) -> ProbeResult {
        var result = ProbeResult(host: "web", port: 22, failures: [ProbeFailure(stage: .keyExchange, code: .noCommonAlgorithm,
                                                                               message: "no common key exchange algorithm")],
                                 serverHostKeyAlgorithms: ["ssh-ed25519"])
        result.gatherSSH { $0.serverKeyExchangeAlgorithms = methods }
        return result
    }

    func testNoCommonKeyExchangeIsSharedOnlyWhenSSHsOwnOfferHasNothingInCommonWithTheServers() throws {
        XCTAssertEqual(try judge(noCommonKeyExchange(serverOffers: ["diffie-hellman-group1-sha1"])).status, .error,
                       "ssh 9.2 does not offer group1 either: no matching key exchange method found")
        XCTAssertEqual(try judge(noCommonKeyExchange(serverOffers: ["curve25519-sha256"])).status, .unverified,
                       "a server that showed our client no method ssh would agree shows ssh another list")
        XCTAssertEqual(try judge(noCommonKeyExchange(serverOffers: nil)).status, .unverified, "the server's list unknown")
        XCTAssertEqual(try judge(noCommonKeyExchange(serverOffers: ["diffie-hellman-group14-sha1"]),
                                 kex: "+diffie-hellman-group14-sha1").status, .unverified,
                       "the user's setting lets ssh agree a method: ssh meets a key")
        XCTAssertEqual(try judge(noCommonKeyExchange(serverOffers: ["curve25519-sha256"]), kex: "-curve25519*").status, .error,
                       "the user's setting removes what the server offers: ssh fails too")
        XCTAssertEqual(try judge(noCommonKeyExchange(serverOffers: ["curve25519-sha256"]), kex: "-*").status, .error)
    }
}
