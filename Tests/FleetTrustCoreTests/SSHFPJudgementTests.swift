import Foundation
import XCTest
@testable import FleetTrustCore

/// SSHFP answers read with bounds and judged as `ssh` 9.2's `verify_host_key_dns` and
/// `verify_host_key` do (the real resolver and `ssh` as the oracle: `SSHFPOracleTests`).
final class SSHFPJudgementTests: XCTestCase {
    let a = TestKeys.a, b = TestKeys.b

    /// A response: header with `ad`, the question for `h.example`, then `answers` (type, class, rdata),
    /// each owner a compression pointer to the question's name.
    private func message(ad: Bool, answers: [(UInt16, UInt16, [UInt8])], response: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [0x12, 0x34, response ? 0x81 : 0x01, ad ? 0xa0 : 0x80, 0, 1, 0, UInt8(answers.count), 0, 0, 0, 0]
        bytes += [1, UInt8(ascii: "h"), 7] + Array("example".utf8) + [0, 0, 44, 0, 1]
        for (type, rrClass, data) in answers {
            bytes += [0xc0, 12, UInt8(type >> 8), UInt8(type & 0xff), UInt8(rrClass >> 8), UInt8(rrClass & 0xff), 0, 0, 1, 44,
                      UInt8(data.count >> 8), UInt8(data.count & 0xff)] + data
        }
        return bytes
    }

    private func rdata(_ record: SSHFPRecord) -> [UInt8] { [record.algorithm, record.digestType] + record.digest }

    func testParserKeepsSSHFPRecordsOfClassINAndTheADBit() throws {
        let records = SSHFPRecord.records(for: a)
        let bytes = message(ad: true, answers: [(44, 1, rdata(records[0])), (46, 1, [1, 2, 3]), (44, 3, rdata(records[1])),
                                                (44, 1, [4]), (44, 1, rdata(records[1]))])
        XCTAssertEqual(try DNSAnswerParser.parse(bytes).get(), .records([records[0], records[1]], validated: true),
                       "RRSIGs, another class and a record shorter than two bytes are skipped")
        XCTAssertEqual(try DNSAnswerParser.parse(message(ad: false, answers: [(44, 1, rdata(records[0]))])).get(),
                       .records([records[0]], validated: false))
        XCTAssertEqual(try DNSAnswerParser.parse(message(ad: true, answers: [])).get(), .none(why: "no SSHFP record"))
    }

    func testHostileMessagesAreMalformedAsAWholeAsDnExpandFailsThem() {
        let good = message(ad: true, answers: [(44, 1, rdata(SSHFPRecord.records(for: a)[1]))])
        for cut in 0..<good.count {
            guard case .failure = DNSAnswerParser.parse(Array(good.prefix(cut))) else { return XCTFail("\(cut) bytes parsed") }
        }
        var loop = good
        loop[28] = 27
        XCTAssertEqual(DNSAnswerParser.parse(loop), .failure(.badLabel(at: 27)),
                       "a pointer loop fails the message, as dn_expand fails it for ssh (records behind it are never used)")
        var outside = good
        outside[28] = 250
        XCTAssertEqual(DNSAnswerParser.parse(outside), .failure(.badLabel(at: 27)), "a pointer out of the message")
        var badLabel = good
        badLabel[12] = 0x40
        XCTAssertEqual(DNSAnswerParser.parse(badLabel), .failure(.badLabel(at: 12)))
        var lying = good
        lying[7] = 200
        XCTAssertEqual(DNSAnswerParser.parse(lying), .failure(.truncated(at: good.count)), "an answer count the bytes do not hold")
        var long = good
        long.replaceSubrange(37...38, with: [0xff, 0xff])
        XCTAssertEqual(DNSAnswerParser.parse(long), .failure(.truncated(at: 39)), "an rdata length past the end")
        XCTAssertEqual(DNSAnswerParser.parse(message(ad: true, answers: [], response: false)), .failure(.notAResponse))
        XCTAssertEqual(DNSAnswerParser.parse([UInt8](repeating: 0, count: 70_000)), .failure(.tooLarge(70_000)))
        let many = message(ad: true, answers: Array(repeating: (44, 1, rdata(SSHFPRecord.records(for: a)[1])), count: 255))
        XCTAssertEqual((try? DNSAnswerParser.parse(many).get())?.records.count, 255)
    }

    func testOneDisagreeingRecordCancelsAMatchAndAnUnknownDigestTypeVoidsTheLookup() {
        let mine = SSHFPRecord.records(for: a), other = SSHFPRecord.records(for: b)
        XCTAssertEqual(SSHFPFinding.verdict(a, .records(mine, validated: true)), .validatedMatch)
        XCTAssertEqual(SSHFPFinding.verdict(a, .records([mine[1]], validated: false)), .unvalidatedMatch)
        XCTAssertEqual(SSHFPFinding.verdict(a, .records([mine[1], other[0]], validated: true)), .mismatch, "dns.c: DNS_VERIFY_FAILED clears the match")
        XCTAssertEqual(SSHFPFinding.verdict(a, .records(SSHFPRecord.records(for: TestKeys.ecdsa), validated: true)), .mismatch,
                       "records of another algorithm only: found, no match")
        XCTAssertEqual(SSHFPFinding.verdict(a, .records([mine[1], SSHFPRecord(algorithm: 4, digestType: 9, digest: [1])], validated: true)), .none)
        XCTAssertEqual(SSHFPFinding.verdict(a, .records([mine[1], SSHFPRecord(algorithm: 4, digestType: 2, digest: [1, 2])], validated: true)),
                       .validatedMatch, "a digest of the wrong length is neither a match nor a failure")
        XCTAssertEqual(SSHFPFinding.verdict(a, .none(why: "x")), .none)
    }

    private func host(_ mode: SSHFPMode?, address: String = "h.example") -> InventoryHost {
        var host = InventoryHost(name: "h", address: address, port: 22)
        host.sshOptions.verifyHostKeyDNS = mode
        return host
    }

    private func judge(_ knownHosts: String, _ answer: SSHFPAnswer?, _ host: InventoryHost) -> JudgedHost {
        var judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file(knownHosts)]), pins: nil)
        if let answer { judge.sshfpAnswers = ["h.example": answer] }
        return judge.judge(host, ProbeResult(host: host.address, port: 22, keys: [DiscoveredKey(key: a)]))
    }

    func testAValidatedMatchUnderYesTrustsBeforeKnownHostsAndNothingElseDoes() {
        let validated = SSHFPAnswer.records(SSHFPRecord.records(for: a), validated: true)
        let trusted = judge("", validated, host(.yes))
        XCTAssertEqual(trusted.status, .trusted)
        XCTAssertEqual(trusted.trustedBy, [.dns])
        XCTAssertEqual(judge("h.example \(b.openSSHLine)\n", validated, host(.yes)).status, .trusted, "a CHANGED line is not read")
        XCTAssertEqual(judge("@revoked h.example \(a.openSSHLine)\n", validated, host(.yes)).status, .trusted, "nor a @revoked line")
        XCTAssertEqual(judge("", validated, host(.ask)).status, .new)
        XCTAssertEqual(judge("", .records(SSHFPRecord.records(for: a), validated: false), host(.yes)).status, .new)
        XCTAssertEqual(judge("", validated, host(.no)).status, .new)
        XCTAssertNil(judge("", validated, host(.no)).sshfp, "off: not looked up, nothing said")
        XCTAssertNil(judge("", validated, host(.yes, address: "192.0.2.1")).sshfp, "ssh asks DNS nothing about an address")
        XCTAssertEqual(judge("h.example \(b.openSSHLine)\n", .records(SSHFPRecord.records(for: b), validated: true), host(.yes)).status, .changed)
    }

    func testAStaleRecordIsAFindingThatChangesNoStatus() {
        let stale = judge("h.example \(a.openSSHLine)\n", .records(SSHFPRecord.records(for: b), validated: true), host(.yes))
        XCTAssertEqual(stale.status, .trusted)
        XCTAssertEqual(stale.trustedBy, [.knownHosts])
        XCTAssertEqual(stale.sshfp?.verdict, .mismatch)
        XCTAssertEqual(stale.sshfp?.stale, [0])
        XCTAssertTrue(JudgementWords.sshfp(stale).contains { $0.hasPrefix("Stale SSHFP records") })
        XCTAssertEqual(judge("", nil, host(.yes)).sshfp?.verdict, SSHFPFinding.Verdict.none)
    }

    func testACertificateIsJudgedAndPrintedAsTheKeyItCertifies() throws {
        let plain = try JudgeFixtures.key("trust", "host")
        let certificate = try JudgeFixtures.certificate("trust", ["ca", "-h", "-n", "web.example"])
        XCTAssertTrue(certificate.isCertificate)
        XCTAssertEqual(SSHFPRecord.records(for: certificate), SSHFPRecord.records(for: plain))
        XCTAssertEqual(SSHFPFinding.verdict(certificate, .records(SSHFPRecord.records(for: plain), validated: true)), .validatedMatch,
                       "sshconnect.c: certificates are downgraded to the plain key for DNS")
    }

    func testHostsWithoutRecordsToPrintAreCommentsOnly() {
        let known = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("h.example,192.0.2.1 \(a.openSSHLine)\n")]), pins: nil)
        let proved = known.judge(host(nil), ProbeResult(host: "h.example", port: 22, keys: [DiscoveredKey(key: a), DiscoveredKey(key: a)]))
        XCTAssertEqual(proved.status, .trusted)
        XCTAssertEqual(SSHFPScanSink.lines(proved, trustOnFirstUse: false),
                       ["; h (h.example:22): trusted"] + SSHFPRecord.records(for: a).map { $0.zoneLine(owner: "h.example") },
                       "a key proved twice is printed once")
        let address = known.judge(host(nil, address: "192.0.2.1"), ProbeResult(host: "192.0.2.1", port: 22, keys: [DiscoveredKey(key: a)]))
        XCTAssertEqual(SSHFPScanSink.lines(address, trustOnFirstUse: false),
                       ["; h (192.0.2.1:22): trusted, 192.0.2.1 is not a name ssh looks SSHFP records up for"])
        let judge = FleetJudge(knownHosts: KnownHosts(files: [TestKeys.file("")]), pins: nil)
        let unvouched = judge.judge(host(nil), ProbeResult(host: "h.example", port: 22, keys: [DiscoveredKey(key: a)]))
        XCTAssertEqual(SSHFPScanSink.lines(unvouched, trustOnFirstUse: false),
                       ["; h (h.example:22): new, no record: new, and no pin proves its keys (pin them, or pass --trust-on-first-use)"],
                       "a new key nothing vouches for is never published")
        let nothing = judge.judge(host(nil), ProbeResult(host: "h.example", port: 22, keys: [],
                                                         failures: [ProbeFailure(stage: .connect, code: .connectionRefused, message: "refused")]))
        XCTAssertEqual(SSHFPScanSink.lines(nothing, trustOnFirstUse: false), ["; h (h.example:22): unreachable, proved no key"])
        let hostile = host(nil, address: "h.example;rm")
        XCTAssertEqual(SSHFPScanSink.lines(known.judge(hostile, ProbeResult(host: "x", port: 22, keys: [DiscoveredKey(key: a)])), trustOnFirstUse: true).count, 1,
                       "a name that is not one zone-file token is never printed as an owner")
    }

    func testZoneLinesAreSshKeygenLines() {
        let lines = SSHFPRecord.records(for: a).map { $0.zoneLine(owner: "h.example") }
        XCTAssertEqual(lines.map { $0.split(separator: " ").prefix(5).joined(separator: " ") }, ["h.example IN SSHFP 4 1", "h.example IN SSHFP 4 2"])
        XCTAssertEqual(lines[1].split(separator: " ").last.map(String.init), Digest.sha256(a.blob).map { String(format: "%02x", $0) }.joined())
    }
}
