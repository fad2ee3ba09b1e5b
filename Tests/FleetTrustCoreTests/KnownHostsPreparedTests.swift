import XCTest
@testable import FleetTrustCore

/// Bulk matching of hashed lines must answer exactly as one lookup at a time does.
final class KnownHostsPreparedTests: XCTestCase {
    private let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"

    func testPreparedLookupsMatchTheSameLinesAsUnpreparedOnes() throws {
        let names = (0..<300).map { $0 % 3 == 0 ? "[h\($0).example]:2222" : "h\($0).example" }
        var text = "# mixed file\n"
        for (i, name) in names.enumerated() {
            text += i % 2 == 0 ? "\(try HashedHostName(hashing: name).field) \(key)\n" : "\(name) \(key)\n"
        }
        text += "\(try HashedHostName(hashing: "h2.example").field) \(key)\n"
        text += "*.example,!h5.example \(key)\n"
        let file = KnownHostsFile(path: "kh", bytes: Array(text.utf8))
        let lookups = names + ["absent.example", "[absent.example]:22", "H2.EXAMPLE"]
        let prepared = file.preparing(lookups: Array(lookups.prefix(200)))
        XCTAssertNotNil(prepared.hashedMatchCache)
        for lookup in lookups {
            XCTAssertEqual(prepared.matchingLines(lookup), file.matchingLines(lookup), lookup)
        }
        XCTAssertEqual(prepared.matchingLines("h2.example").count, 3, "two hashed lines and the wildcard")
        XCTAssertEqual(prepared.matchingLines("h5.example"), file.matchingLines("h5.example"))
    }
}

/// The judge prepares the bare-name retry only where `ssh` would make it, and judges the same.
final class FleetJudgePreparedTests: XCTestCase {
    func testBareNameRetryIsPreparedOnlyWhereThePortEntryRecordsNoKey() throws {
        let key = try HostKey(openSSHLine: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl")
        let text = "\(try HashedHostName(hashing: "bare.example").field) \(key.openSSHLine)\n"
            + "\(try HashedHostName(hashing: "[port.example]:2222").field) \(key.openSSHLine)\n"
        let knownHosts = KnownHosts(files: [KnownHostsFile(path: "kh", bytes: Array(text.utf8))])
        let hosts = [InventoryHost(name: "bare", address: "bare.example", port: 2222),
                     InventoryHost(name: "port", address: "port.example", port: 2222)]
        let judge = FleetJudge(knownHosts: knownHosts, pins: nil)
        let prepared = judge.preparing(for: hosts)
        let cache = try XCTUnwrap(prepared.knownHosts.knownHosts(for: hosts[0]).files[0].hashedMatchCache)
        XCTAssertNotNil(cache[Array("bare.example".utf8)], "nothing recorded for [bare.example]:2222: ssh retries the bare name")
        XCTAssertNil(cache[Array("port.example".utf8)], "[port.example]:2222 is recorded: ssh never retries")
        for host in hosts {
            let result = ProbeResult(host: host.address, port: host.port, keys: [DiscoveredKey(key: key)])
            XCTAssertEqual(prepared.judge(host, result, now: 1_800_000_000).status, .trusted, host.name)
            XCTAssertEqual(prepared.judge(host, result, now: 1_800_000_000).keys, judge.judge(host, result, now: 1_800_000_000).keys, host.name)
        }
    }
}
