import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// Misbehaving servers end in one typed failure at the right stage, within the timeout, and
/// nothing they send reaches a result unsanitized.
final class HostileServerProbeTests: XCTestCase {
    private func probe(_ behavior: HostileBehavior) async throws -> (ProbeResult, Duration) {
        let server = try HostileServer(behavior)
        Thread.detachNewThread { server.serve(lifetime: 15) }
        let pool = ProbePool(settings: .init(timeout: .seconds(2)))
        let start = ContinuousClock.now
        var result: ProbeResult?
        for await event in pool.probe([InventoryHost(name: "127.0.0.1", port: server.port)]) { result = event.result }
        return (try XCTUnwrap(result), ContinuousClock.now - start)
    }

    func testEachHostileBehaviourFailsAtItsStageWithinTheTimeout() async throws {
        let expected: [HostileBehavior: (ProbeStage, Set<FailureCode>)] = [
            .silent: (.banner, [.bannerTimeout]),
            .slowBanner: (.banner, [.bannerTimeout]),
            .preBannerFlood: (.banner, [.notSSH]),
            .endlessBanner: (.banner, [.notSSH]),
            .garbageAfterBanner: (.keyExchange, [.kexFailed, .connectionClosed]),
            .closeDuringKex: (.keyExchange, [.kexFailed, .connectionClosed]),
            .escapeBanner: (.keyExchange, [.kexFailed, .connectionClosed]),
            .http: (.banner, [.notSSH]),
        ]
        for behavior in HostileBehavior.allCases {
            let (result, elapsed) = try await probe(behavior)
            let failure = try XCTUnwrap(result.failure, "\(behavior)")
            let (stage, codes) = try XCTUnwrap(expected[behavior], "\(behavior) has no expectation")
            XCTAssertEqual(failure.stage, stage, "\(behavior): \(failure)")
            XCTAssertTrue(codes.contains(failure.code), "\(behavior): \(failure.code): \(failure)")
            XCTAssertLessThan(elapsed, .seconds(7), "\(behavior)")
            for text in [failure.message.value, result.serverVersion ?? ""] {
                XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || (0x7f..<0xa0).contains($0.value) },
                               "\(behavior): \(text)")
            }
        }
    }
}
