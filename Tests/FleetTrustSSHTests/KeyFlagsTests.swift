import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

final class KeyFlagsTests: XCTestCase {
    private var directory = ""
    private var generated = 0

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-keyflags-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func generate(_ type: String, bits: Int? = nil) throws -> HostKey {
        try generateFile(type, bits: bits).key
    }

    private func generateFile(_ type: String, bits: Int? = nil) throws -> (key: HostKey, path: String) {
        generated += 1
        let path = directory + "/\(type)-\(generated)"
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-f", path] + (bits.map { ["-b", String($0)] } ?? []))
        return (try HostKey(openSSHLine: String(contentsOfFile: path + ".pub", encoding: .utf8)), path)
    }

    private func discovered(_ key: HostKey, algorithm: String) -> DiscoveredKey {
        DiscoveredKey(key: key, algorithms: NegotiatedAlgorithms(hostKey: algorithm, keyExchange: "curve25519-sha256",
                                                                 cipher: "aes128-ctr", mac: "hmac-sha2-256"))
    }

    func testWeakKeysAreFlaggedAndStrongOnesAreNot() throws {
        let dsa = try generate("dsa")
        let shortRSA = try generate("rsa", bits: 1024)
        let rsa = try generate("rsa", bits: 2048)
        let ed25519 = try generate("ed25519")
        XCTAssertEqual(WeakKeys.weaknesses(of: discovered(dsa, algorithm: "ssh-dss")), [.dsa])
        XCTAssertEqual(WeakKeys.weaknesses(of: discovered(shortRSA, algorithm: "rsa-sha2-512")), [.shortRSA])
        XCTAssertEqual(WeakKeys.weaknesses(of: discovered(rsa, algorithm: "ssh-rsa")), [.sha1Only])
        XCTAssertEqual(WeakKeys.weaknesses(of: discovered(rsa, algorithm: "rsa-sha2-256")), [])
        XCTAssertEqual(WeakKeys.weaknesses(of: discovered(ed25519, algorithm: "ssh-ed25519")), [])
    }

    func testHostsPresentingTheSameKeyAreGroupedWithEveryHostSharingIt() throws {
        let shared = try generate("ed25519")
        let own = try generate("ecdsa")
        let other = try generate("ed25519")
        func result(_ keys: [HostKey]) -> ProbeResult {
            ProbeResult(host: "h", port: 22, keys: keys.map { DiscoveredKey(key: $0) })
        }
        let results: [ProbeResult?] = [result([shared, own]), result([other]), nil, result([shared]), result([shared])]
        let groups = SharedKeys.groups(in: results)
        XCTAssertEqual(groups.count, 1)
        XCTAssertEqual(groups.first?.key, shared)
        XCTAssertEqual(groups.first?.hosts, [0, 3, 4])
        XCTAssertEqual(SharedKeys.groups(in: [result([shared]), result([other])]), [])
        let table = SharedKeyTable(names: (0..<5).map { "h\($0)" }, results: results)
        XCTAssertEqual(table.entries, [SharedKeyTable.Entry(fingerprint: shared.sha256Fingerprint, type: shared.type, hosts: ["h0", "h3", "h4"])])
        XCTAssertEqual(table.sharing(result([shared, own])), KeySharing(hostsByFingerprint: [shared.sha256Fingerprint: 3]))
        XCTAssertEqual(table.sharing(result([other])), KeySharing(), "a key nobody else presents is not counted")
        let sameName = SharedKeyTable(names: ["h0", "h0", "h1"], results: [result([other]), result([other]), result([own])])
        XCTAssertEqual(sameName.entries, [], "one name twice (two ports, two scanners) does not share a key")
    }

    func testCertificateCountsAsTheKeyItCertifiesWhenLookingForSharedKeys() throws {
        let caPath = try generateFile("ed25519").path
        let (host, hostPath) = try generateFile("ed25519")
        try Tool.check("/usr/bin/ssh-keygen", ["-q", "-s", caPath, "-I", "host", "-h", "-n", "127.0.0.1", hostPath + ".pub"])
        let certificate = try HostKey(openSSHLine: String(contentsOfFile: hostPath + "-cert.pub", encoding: .utf8))
        let results: [ProbeResult?] = [
            ProbeResult(host: "a", port: 22, keys: [DiscoveredKey(key: certificate)]),
            ProbeResult(host: "b", port: 22, keys: [DiscoveredKey(key: host)]),
        ]
        let groups = SharedKeys.groups(in: results)
        XCTAssertEqual(groups, [SharedKeyGroup(key: host, hosts: [0, 1])])
    }
}
