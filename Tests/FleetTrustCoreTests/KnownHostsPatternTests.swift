import XCTest
@testable import FleetTrustCore

final class KnownHostsPatternTests: XCTestCase {
    func testThreeAnswersAndNegationWinsWhateverTheOrder() {
        XCTAssertEqual(KnownHostsPattern.match(name: "foo.example", list: "*.example"), .match)
        XCTAssertEqual(KnownHostsPattern.match(name: "foo.example", list: "*,!foo.example"), .negated)
        XCTAssertEqual(KnownHostsPattern.match(name: "foo.example", list: "!foo.example,*"), .negated)
        XCTAssertEqual(KnownHostsPattern.match(name: "foo.example", list: "!bar.example"), .noMatch)
        XCTAssertEqual(KnownHostsPattern.match(name: "foo.example", list: "a,,foo.example"), .match)
    }

    func testWildcardsCrossDotsBracketsAndPortsAndQuestionMarkIsOneCharacter() {
        XCTAssertEqual(KnownHostsPattern.match(name: "[h.example]:2222", list: "*"), .match)
        XCTAssertEqual(KnownHostsPattern.match(name: "[h.example]:2222", list: "[*.example]:*"), .match)
        XCTAssertEqual(KnownHostsPattern.match(name: "[h.example]:2222", list: "*.example"), .noMatch)
        XCTAssertEqual(KnownHostsPattern.match(name: "[h]:2222", list: "[h]:22?2"), .match)
        XCTAssertEqual(KnownHostsPattern.match(name: "[h]:22", list: "[h]:22?"), .noMatch)
    }

    func testPatternsAreLowercasedButNotHashedNames() throws {
        XCTAssertEqual(KnownHostsPattern.match(name: "Foo.Example", list: "FOO.example"), .match)
        let hashed = try HashedHostName(hashing: "Foo.Example")
        XCTAssertTrue(hashed.matches("Foo.Example"))
        XCTAssertFalse(hashed.matches("foo.example"))
    }

    func testSubpatternOf1023BytesEndsTheListWithNoMatch() {
        let long = String(repeating: "a", count: 1023), shorter = String(repeating: "a", count: 1022)
        XCTAssertEqual(KnownHostsPattern.match(name: "h", list: "h,\(long)"), .noMatch)
        XCTAssertEqual(KnownHostsPattern.match(name: "h", list: "h,\(shorter)"), .match)
        XCTAssertEqual(KnownHostsPattern.match(name: "h", list: "!h,\(long)"), .negated)
    }

    func testPathologicalStarPatternsStayFast() {
        let pattern = String(repeating: "*a", count: 500) + "b"
        XCTAssertEqual(KnownHostsPattern.match(name: String(repeating: "a", count: 900), list: pattern), .noMatch)
    }

    func testLookupNamesAreCanonicalisedLikeSSH() {
        XCTAssertEqual(LookupName(host: "127.1").hostString, "127.0.0.1")
        XCTAssertEqual(LookupName(host: "0:0:0:0:0:FFFF:127.0.0.1", port: 2222).hostString, "[::ffff:127.0.0.1]:2222")
        XCTAssertEqual(LookupName(host: "Web.Example", port: 2222).hostString, "[web.example]:2222")
        XCTAssertEqual(LookupName(host: "Web.Example", port: 2222).retryString, "web.example")
        XCTAssertNil(LookupName(host: "web", port: 22).retryString)
        let alias = LookupName(host: "web", port: 2222, hostKeyAlias: "Alias")
        XCTAssertEqual(alias.hostString, "alias")
        XCTAssertNil(alias.retryString)
    }

    func testCIDRExtensionIsOffByDefault() throws {
        let text = "192.0.2.0/24,!192.0.2.9 \(TestKeys.a.openSSHLine)\n"
        XCTAssertEqual(try TestKeys.verdict(text, TestKeys.a, host: "192.0.2.7"), .new)
        let cidr = KnownHostsJudge(knownHosts: KnownHosts(files: [TestKeys.file(text)], options: .init(cidrPatterns: true)))
        XCTAssertEqual(try cidr.judge(TestKeys.a, for: ConnectionTarget(host: "192.0.2.7")).verdict, .trusted)
        XCTAssertEqual(try cidr.judge(TestKeys.a, for: ConnectionTarget(host: "192.0.2.9")).verdict, .new)
        XCTAssertEqual(try cidr.judge(TestKeys.a, for: ConnectionTarget(host: "198.51.100.1")).verdict, .new)
    }
}
