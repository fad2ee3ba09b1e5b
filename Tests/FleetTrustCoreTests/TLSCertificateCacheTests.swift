import Foundation
import XCTest
@testable import FleetTrustCore
import FleetTrustTestFleet
import Synchronization

/// Certificates read once and reused (by their exact DER bytes) give exactly what a fresh read
/// gives, stay within their bound, and serve chain and name checks on many threads at once;
/// certificates made by the `openssl` CLI.
final class TLSCertificateCacheTests: XCTestCase {
    private var lab: TLSTestLab!

    override func setUpWithError() throws {
        lab = try TLSTestLab()
        for name in ["root", "leaf", "other"] { try lab.key(name) }
        try lab.selfSigned("root", key: "root", subject: "cache test root", ca: true)
        try lab.signed("leaf", key: "leaf", subject: "localhost", by: "root", dnsNames: ["localhost"])
        try lab.signed("other", key: "other", subject: "other.test", by: "root", dnsNames: ["other.test"])
    }

    override func tearDown() {
        lab?.stop()
    }

    private func der(_ name: String) throws -> [UInt8] {
        let pem = try String(contentsOfFile: lab.path(name + ".pem"), encoding: .utf8)
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return try XCTUnwrap(Data(base64Encoded: body).map { Array($0) })
    }

    func testCertificateReadAgainFromTheSameBytesEqualsAFreshRead() throws {
        let leaf = try der("leaf")
        let fresh = try TLSParsedCertificate(der: leaf).certificate
        XCTAssertEqual(try TLSCertificate(der: leaf), fresh)
        XCTAssertEqual(try TLSCertificate(der: leaf), fresh)
        XCTAssertEqual(fresh.subjectAltNames, [.dns(CleanText("localhost"))])
        XCTAssertEqual(fresh.der, leaf)
    }

    func testCacheKeepsAtMostItsBoundAndDropsTheOldestFirst() throws {
        let (root, leaf, other) = (try der("root"), try der("leaf"), try der("other"))
        let cache = TLSCertificateCache(entries: 2, bytes: 1 << 20)
        let firstRoot = try cache.parsed(root)
        let firstLeaf = try cache.parsed(leaf)
        XCTAssertTrue(try cache.parsed(root) === firstRoot, "a certificate read before is not read again")
        _ = try cache.parsed(other)
        XCTAssertFalse(try cache.parsed(root) === firstRoot, "the oldest entry made room for the third")
        XCTAssertTrue(try cache.parsed(other) === cache.parsed(other))
        XCTAssertFalse(try cache.parsed(leaf) === firstLeaf, "the leaf went when the root came back")

        let small = TLSCertificateCache(entries: 100, bytes: root.count + leaf.count - 1)
        let kept = try small.parsed(root)
        _ = try small.parsed(leaf)
        XCTAssertFalse(try small.parsed(root) === kept, "the byte bound dropped the root")
    }

    func testBytesThatAreNotACertificateAreRefusedEveryTime() throws {
        let cache = TLSCertificateCache(entries: 10, bytes: 1 << 20)
        var truncated = try der("leaf")
        truncated.removeLast()
        for _ in 0..<2 {
            XCTAssertThrowsError(try cache.parsed(truncated)) { XCTAssertEqual($0 as? TLSCertificate.ReadError, .notDER) }
            XCTAssertThrowsError(try cache.parsed(try der("leaf") + [0])) { XCTAssertEqual($0 as? TLSCertificate.ReadError, .notDER) }
            XCTAssertThrowsError(try cache.parsed([])) { XCTAssertEqual($0 as? TLSCertificate.ReadError, .empty) }
        }
    }

    func testChainAndNameChecksOnManyThreadsAgreeWithOneCheck() throws {
        let (root, leaf, other) = (try der("root"), try der("leaf"), try der("other"))
        let anchors = try TLSTrustAnchors.files([lab.path("root.pem")])
        let expected = [TLSChainCheck.check(chain: [leaf], anchors: anchors), TLSChainCheck.check(chain: [other, root], anchors: anchors)]
        XCTAssertTrue(expected.allSatisfy(\.validates))
        XCTAssertEqual(expected[0].built.map(\.der), [leaf, root])
        let untrusted = TLSChainCheck.check(chain: [root], anchors: try TLSTrustAnchors.files([lab.path("other.pem")]))
        XCTAssertFalse(untrusted.validates)
        let disagreements = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let chain = index % 2 == 0 ? [leaf] : [other, root]
            let check = TLSChainCheck.check(chain: chain, anchors: anchors)
            let named = TLSChainCheck.leafNames(chain[0], index % 2 == 0 ? "localhost" : "other.test")
            let misnamed = TLSChainCheck.leafNames(chain[0], index % 2 == 0 ? "other.test" : "localhost")
            if check != expected[index % 2] || !named || misnamed { disagreements.withLock { $0 += 1 } }
        }
        XCTAssertEqual(disagreements.withLock { $0 }, 0)
    }
}
