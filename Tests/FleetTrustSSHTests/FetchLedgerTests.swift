import XCTest
@testable import FleetTrustSSH
import FleetTrustCore

/// Which key types a host's probe names as not fetched: every planned exchange with no key of its
/// type in the result, with its own connection's failure or the one that ended the probe. The
/// end-to-end cases (a relay in front of a real sshd) are in `UnfetchedKeyTypeTests`.
final class FetchLedgerTests: XCTestCase {
    private static let ed25519 = try! HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEf84BXqlw4P6E937hMKFbQKSNtq2sAfXj5Kb2cHqggY")
    private static let ecdsa = try! HostKey(openSSHLine: "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEpkfqq9BN9Hzgc0DSSLcygXJipKX8ds80oNkLtzrGHOltvlFPMriA2zQvBRYnq2HaMM4hlMqAlT+sCU+qUPr4k=")
    private static let offered = ["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256"]
    private static let closed = ProbeFailure(stage: .keyExchange, code: .connectionClosed, message: "closed")
    private static let forged = ProbeFailure(stage: .keyExchange, code: .badSignature, message: "bad signature")

    private func proved(_ keys: [HostKey], failures: [ProbeFailure] = []) -> ProbeResult {
        ProbeResult(host: "h", port: 22, keys: keys.map { DiscoveredKey(key: $0) }, failures: failures,
                    serverHostKeyAlgorithms: Self.offered)
    }

    private func named(_ result: ProbeResult) -> [String] {
        (result.ssh?.unfetched ?? []).map { "\($0.algorithm) \($0.failure.code.rawValue)" }
    }

    func testEachPlannedTypeWithoutAKeyIsNamedWithItsConnectionsFailure() {
        let exchanges = ExchangeBoard.exchanges(for: Self.offered)
        var result = proved([Self.ed25519], failures: [Self.forged, Self.closed])
        var ledger = FetchLedger()
        for exchange in exchanges {
            let outcome: AttemptOutcome = switch exchange.negotiates(with: Self.offered) {
            case "ssh-ed25519"?: AttemptOutcome(key: DiscoveredKey(key: Self.ed25519))
            case "ecdsa-sha2-nistp256"?: AttemptOutcome(failure: Self.forged)
            default: AttemptOutcome(failure: Self.closed)
            }
            ledger.asked(exchange, offered: Self.offered, outcome: (outcome, nil))
        }
        ledger.note(into: &result)
        XCTAssertEqual(named(result), ["ecdsa-sha2-nistp256 bad-signature", "rsa-sha2-512 connection-closed"])
    }

    func testATypeFetchedOverAnotherConnectionIsNotNamed() {
        var result = proved([Self.ed25519, Self.ecdsa, try! HostKey(openSSHLine: Self.rsaLine)])
        var ledger = FetchLedger()
        ledger.asked("ecdsa-sha2-nistp256", failure: Self.closed)
        ledger.asked("rsa-sha2-512", failure: Self.forged)  // an RSA key is `ssh-rsa` whatever its signature
        ledger.note(into: &result)
        XCTAssertEqual(named(result), [])
    }

    func testATypeNeverAskedForCarriesTheFailureThatEndedTheProbe() {
        let timeout = ProbeFailure(stage: .keyExchange, code: .kexTimeout, message: "timed out")
        var result = proved([Self.ed25519], failures: [timeout])
        var ledger = FetchLedger()
        ledger.asked("ecdsa-sha2-nistp256", failure: timeout)
        ledger.asked("rsa-sha2-512", failure: nil)
        ledger.asked("rsa-sha2-512", failure: nil)
        ledger.note(into: &result)
        XCTAssertEqual(named(result), ["ecdsa-sha2-nistp256 kex-timeout", "rsa-sha2-512 kex-timeout"])
        XCTAssertTrue(result.ssh?.unfetched.last?.failure.message.value.hasPrefix("not asked for") == true)
    }

    /// A type with no key is named whatever came of its connection: declined, never made with
    /// nothing ending the probe, or one that proved a key of another type (two servers behind one
    /// address, with different keys).
    func testATypeWithoutAKeyIsNamedEvenWithoutAFailure() {
        var result = proved([Self.ed25519])
        var ledger = FetchLedger()
        ledger.asked("ssh-rsa-cert-v01@openssh.com", failure: KeyExchangeFailures.notNeeded)
        ledger.asked("rsa-sha2-512", failure: nil)
        let exchanges = ExchangeBoard.exchanges(for: Self.offered)
        let ecdsa = try! XCTUnwrap(exchanges.first { $0.negotiates(with: Self.offered) == "ecdsa-sha2-nistp256" })
        ledger.asked(ecdsa, offered: Self.offered, outcome: (AttemptOutcome(key: DiscoveredKey(key: Self.ed25519)), nil))
        ledger.note(into: &result)
        XCTAssertEqual(named(result), ["ssh-rsa-cert-v01@openssh.com other", "rsa-sha2-512 other", "ecdsa-sha2-nistp256 other-key-type"])
    }

    func testARetrysOwnFailureReplacesAGuessAndNothingIsNamedWhenNothingWasProved() {
        var result = ProbeResult(host: "h", port: 22, keys: [DiscoveredKey(key: Self.ed25519)],
                                 serverHostKeyAlgorithms: ["ssh-ed25519", "rsa-sha2-512"])
        var ledger = FetchLedger()
        ledger.asked("rsa-sha2-512", failure: nil)
        ledger.asked("rsa-sha2-512", failure: Self.closed)
        ledger.note(into: &result)
        XCTAssertEqual(named(result), ["rsa-sha2-512 connection-closed"])

        var nothing = ProbeResult(host: "h", port: 22, failures: [Self.closed], serverHostKeyAlgorithms: Self.offered)
        var failed = FetchLedger()
        failed.asked("ssh-ed25519", failure: Self.closed)
        failed.note(into: &nothing)
        XCTAssertEqual(named(nothing), [], "the host's error says it")
        XCTAssertFalse(nothing.proof.provesSomething)
    }

    /// A type the server's reported list names and no connection asked for (the probe planned
    /// from another server's list behind the same address) is named too.
    func testATypeTheReportedListNamesIsNamedThoughNoConnectionAskedForIt() {
        var result = ProbeResult(host: "h", port: 22, keys: [DiscoveredKey(key: Self.ed25519)],
                                 serverHostKeyAlgorithms: ["ssh-ed25519", "ssh-ed25519-cert-v01@openssh.com", "ssh-dss"])
        FetchLedger().note(into: &result)
        XCTAssertEqual(named(result), ["ssh-ed25519-cert-v01@openssh.com other"], "ssh-dss is never asked for")
    }

    private static let rsaLine = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQD3t1/RD9NRhi8PdMZ2oHImxn0udSWmTNr1iY/zx9iEiZhpkwHL40da2VBXQeByvdC0UODfra2oefqzaMgZ5+gUhOGOiWAr14xdwmrMZ5BwmcmH4q/hNnlbsYjHZTlE8nFCR0FMfS48nsyyFerItBPPZ6qgono17WujhhzAkaZLIK2IgsPVq1djdkFwtR/yhPV/tbcZRr48DpHRRem0pjhYGPpruvctR6mGZTrsa9iuUqskKIXHCLMs3nYa4TSsszmrECx3fzPqh+s6o2FzXmaQLNJsubaogUoar8pa2vr23+b9EI5N8epukL8MCOrJAJYWY3zdq2KDxxMwE8prk/kB"
}
