import Foundation
import XCTest
import FleetTrustCore
@testable import FleetTrustSSH

/// The two drivers of the one key-exchange state machine (the event loops for direct addresses,
/// a thread blocked in `poll` for the rest) reach the same outcome against every hostile server:
/// the same proved key, or a failure at the same stage with the same code.
final class EngineParityTests: XCTestCase {
    private struct Outcome: Equatable, CustomStringConvertible {
        var fingerprint: SHA256Fingerprint?
        var stage: ProbeStage?
        var code: FailureCode?

        init(_ outcome: AttemptOutcome) {
            fingerprint = outcome.key?.key.fingerprint
            stage = outcome.failure?.stage
            code = outcome.failure?.code
        }

        var description: String { fingerprint.map { "\($0)" } ?? "\(stage?.rawValue ?? "?")/\(code.map { "\($0)" } ?? "?")" }
    }

    private func bothDrivers(mode: String, timeout: Duration = .seconds(5)) throws -> (engine: Outcome, thread: Outcome, key: HostKey) {
        let server = try HostileSSHServer(mode: mode)
        defer { server.stop() }
        guard case .success(let addresses) = Resolver.resolve("127.0.0.1", port: server.port, deadline: .now + .seconds(1),
                                                              cancellation: ProbeCancellation()),
              let address = addresses.first else { throw CocoaError(.fileReadUnknown) }
        let offered = ["ssh-ed25519"]
        let engine = ExchangeEngine.shared.run([
            ExchangeRequest(address: address, port: server.port, offer: .upFront(offered), timeout: timeout,
                            connectDeadline: .now + timeout, cancellation: ProbeCancellation(), politeness: TargetPoliteness()),
        ])[0]
        var probe = CertificateFirstProbe(endpoint: .direct(address), port: server.port, timeout: timeout)
        probe.offer = .upFront(offered)
        let thread = probe.run(cancellation: ProbeCancellation(), connectDeadline: .now + timeout)
        return (Outcome(engine), Outcome(thread), server.hostKey)
    }

    func testBothDriversAgreeOnEveryHostileServer() throws {
        let expected: [String: (stage: ProbeStage, code: FailureCode)?] = [
            "honest": nil, "dribble": nil, "wrong-guess": nil, "reply-and-close": nil,
            "forge": (.keyExchange, .badSignature), "swap": (.keyExchange, .badSignature),
            "zero-point": (.keyExchange, .kexFailed), "oversize": (.keyExchange, .kexFailed),
            "disconnect": (.keyExchange, .kexFailed), "second-ident": (.keyExchange, .kexFailed),
            "reset": (.keyExchange, .connectionClosed), "flood": (.banner, .notSSH), "ssh1": (.banner, .notSSH),
        ]
        for (mode, failure) in expected.sorted(by: { $0.key < $1.key }) {
            let (engine, thread, key) = try bothDrivers(mode: mode)
            XCTAssertEqual(engine, thread, "\(mode): the engine and the thread-bound exchange disagree")
            if let failure {
                XCTAssertNil(engine.fingerprint, "\(mode) must not prove a key")
                XCTAssertEqual(engine.stage, failure.stage, "\(mode): \(engine)")
                XCTAssertEqual(engine.code, failure.code, "\(mode): \(engine)")
            } else {
                XCTAssertEqual(engine.fingerprint, key.fingerprint, "\(mode) proves its key: \(engine)")
            }
        }
    }

    func testBothDriversTimeOutAStalledExchangeAlike() throws {
        let (engine, thread, _) = try bothDrivers(mode: "stall", timeout: .seconds(1))
        XCTAssertEqual(engine, thread)
        XCTAssertEqual(engine.code, .kexTimeout)
    }
}
