import XCTest
@testable import FleetTrustCore

/// A host line of the scan document is written by hand (`CompactJSON`), and must be byte for byte
/// what Foundation's encoder, with the document's options, makes of the same entry: over hostile
/// text (every control and ASCII character, quotes, backslashes, slashes, cleaned invalid UTF-8,
/// emoji, bidirectional marks), extreme numbers, every status, verdict and code, and every
/// optional field absent and present.
final class ScanReportLineTests: XCTestCase {
    private let encoder = ScanDocumentLayout.encoder()

    private static let hostile: [String] = {
        var texts = ["", "plain", "a/b//c", "\"quoted\"", "back\\slash\\", "\\\"", "é e\u{301} ß", "👩‍👩‍👧 🇫🇷",
                     "\u{202E}evil\u{202C} \u{2066}x\u{2069} \u{200F}", "\u{2028}\u{2029}\u{85}\u{7f}\u{9b}",
                     "\u{feff}bom", "日本語のホスト", String(repeating: "long/\u{1}\"", count: 500),
                     CleanText(bytes: [0xff, 0xfe, 0x41, 0xc3, 0x28, 0x1b, 0x5b, 0x32, 0x4a, 0xed, 0xa0, 0x80]).value,
                     Sanitizer.clean("\u{1b}]52;c;ZXZpbA==\u{7}\r\n\t")]
        texts.append(String(decoding: (0..<0x80).map { UInt8($0) }, as: UTF8.self))
        texts += (0..<0x20).map { String(UnicodeScalar(UInt8($0))) + "x" }
        return texts
    }()

    private func judgedHost() -> JudgedHost {
        let knownHosts = TestKeys.file("trusted.example \(TestKeys.a.openSSHLine)\n")
        let judge = FleetJudge(knownHosts: KnownHosts(files: [knownHosts]), pins: nil)
        let host = InventoryHost(name: "trusted.example", address: "trusted.example", user: "ops", groups: ["web"])
        let result = ProbeResult(host: "trusted.example", port: 22, peerAddress: "192.0.2.1",
                                 keys: [DiscoveredKey(key: TestKeys.a, handshakeMilliseconds: 1.5)])
        return judge.judge(host, result)
    }

    private func assertSameBytes(_ entry: ScanReport.Host, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        var json = CompactJSON()
        try entry.write(to: &json)
        let expected = try encoder.encode(entry)
        XCTAssertEqual(String(decoding: json.bytes, as: UTF8.self), String(decoding: expected, as: UTF8.self), message, file: file, line: line)
        XCTAssertEqual(json.bytes, [UInt8](expected), message, file: file, line: line)
    }

    func testHostileTextIsEscapedExactlyAsTheEncoderDoes() throws {
        let base = ScanReport.Host(judgedHost(), generatedAt: "2026-01-01T00:00:00Z")
        for text in Self.hostile {
            var entry = base
            entry.name = text; entry.host = text; entry.address = text; entry.user = text; entry.groups = [text, text]
            entry.knownHostsName = text; entry.reason = text; entry.method = text; entry.serverVersion = text
            entry.serverHostKeyAlgorithms = [text]; entry.negotiatedAlgorithm = text; entry.scannedFrom = text
            entry.scannedAt = text; entry.policy = text; entry.policySource = text
            entry.pin = ScanReport.Pin(verdict: .mismatch, evidence: [text])
            entry.error = ScanReport.Failure(stage: text, code: FailureCode.allCases[0], message: text)
            entry.route = [ScanReport.Hop(kind: "proxy-jump", hop: text), ScanReport.Hop(kind: text, hop: "")]
            entry.driftMoves = [ScanReport.DriftMove(KeyDrift(kind: .changed, type: text, before: text, now: nil))]
            entry.sshConnection = ScanReport.SSHConnection(key: 0, algorithms: NegotiatedAlgorithms(hostKey: text, keyExchange: text,
                                                                                                     cipher: text, mac: text),
                                                           error: ScanReport.Failure(stage: text, code: FailureCode.allCases[0], message: text))
            entry.unfetchedKeys = [ScanReport.UnfetchedKey(algorithm: text, error: ScanReport.Failure(stage: text, code: .badSignature, message: text)),
                                   ScanReport.UnfetchedKey(algorithm: "", error: ScanReport.Failure(stage: "", code: .other, message: ""))]
            entry.ssh?.hostKeyAlias = text
            entry.ssh?.knownHostsFiles = [text]
            entry.ssh?.userKnownHostsFiles = [text, "/x"]
            entry.ssh?.options.globalKnownHostsFiles = [text]
            entry.ssh?.options.revokedHostKeys = [text]
            entry.keys[0].evidence = [text, text]
            entry.keys[0].key = text; entry.keys[0].type = text; entry.keys[0].fingerprint = text
            entry.keys[0].weaknesses = [text]
            entry.keys[0].firstSeen = text; entry.keys[0].lastSeen = text
            entry.keys[0].algorithms = NegotiatedAlgorithms(hostKey: text, keyExchange: text, cipher: text, mac: text)
            entry.keys[0].certificate = ScanReport.Certificate(ca: text, caKey: text, principals: [text, ""], serial: 7, keyID: text,
                                                              validAfter: 0, validBefore: UInt64.max, criticalOptions: [text],
                                                              problem: .unknownCA, expiresInDays: -3, warnings: [.unknownCA])
            try assertSameBytes(entry, text.debugDescription)
        }
    }

    func testEveryCodeAndExtremeNumberIsWrittenAsTheEncoderWritesIt() throws {
        let base = ScanReport.Host(judgedHost(), generatedAt: "2026-01-01T00:00:00Z")
        let numbers: [Double] = [0, -0.0, 0.1, 1.5, 154.8, 123, 1e21, 1e22, 1e-7, Double.leastNonzeroMagnitude, 12345678.9, -42,
                                 Double.greatestFiniteMagnitude, Double.leastNormalMagnitude, 0.30000000000000004]
        let count = max(HostStatus.allCases.count, KeyVerdict.allCases.count, PinVerdict.allCases.count, FailureCode.allCases.count,
                        CertificateWarning.allCases.count, CertificateProblem.allCases.count, StricterChoice.allCases.count,
                        DriftKind.allCases.count, numbers.count)
        func pick<T>(_ all: [T], _ index: Int) -> T { all[index % all.count] }
        for index in 0..<count {
            var entry = base
            entry.status = pick(HostStatus.allCases, index)
            entry.standardStatus = index % 2 == 0 ? nil : pick(HostStatus.allCases, index + 1)
            entry.port = pick([0, 22, 65535, Int.max, Int.min], index)
            entry.error = index % 3 == 0 ? nil : ScanReport.Failure(stage: pick(ProbeStage.allCases, index).rawValue,
                                                                     code: pick(FailureCode.allCases, index), message: "m")
            entry.stricterThanSSH = Array(StricterChoice.allCases.prefix(index % (StricterChoice.allCases.count + 1)))
            entry.drift = index % 4 == 0 ? nil : pick(DriftKind.allCases, index)
            entry.driftMoves = [ScanReport.DriftMove(KeyDrift(kind: pick(DriftKind.allCases, index), type: "t",
                                                              before: index % 2 == 0 ? nil : "SHA256:b", now: "SHA256:n"))]
            entry.pin = index % 5 == 0 ? nil : ScanReport.Pin(verdict: pick(PinVerdict.allCases, index), evidence: [])
            entry.address = index % 2 == 0 ? nil : "::1"
            entry.user = nil; entry.method = index % 3 == 0 ? nil : "known-hosts"; entry.serverVersion = nil
            entry.serverHostKeyAlgorithms = index % 2 == 0 ? nil : []
            entry.unfetchedKeys = index % 3 == 1 ? nil : index % 3 == 0 ? [] : [ScanReport.UnfetchedKey(
                algorithm: "rsa-sha2-512", error: ScanReport.Failure(stage: pick(ProbeStage.allCases, index).rawValue,
                                                                  code: pick(FailureCode.allCases, index), message: "m"))]
            entry.negotiatedAlgorithm = nil
            var key = base.keys[0]
            key.verdict = pick(KeyVerdict.allCases, index)
            key.plainKeyVerdict = index % 2 == 0 ? nil : pick(KeyVerdict.allCases, index + 3)
            key.pin = pick(PinVerdict.allCases, index + 1)
            key.negotiated = index % 2 == 0
            key.unusable = index % 2 == 0 ? nil : .rsaKeyTooShort
            key.bits = pick([0, 256, 16384, Int.max, Int.min], index)
            key.handshakeMilliseconds = index % 4 == 3 ? nil : pick(numbers, index)
            key.sharedBy = index % 2 == 0 ? nil : pick([2, 10_000, Int.max], index)
            key.fingerprint = index % 3 == 0 ? nil : key.fingerprint
            key.algorithms = index % 2 == 0 ? nil : NegotiatedAlgorithms(hostKey: "h", keyExchange: "k", cipher: "c", mac: "m")
            key.firstSeen = nil; key.lastSeen = nil
            key.certificate = index % 2 == 0 ? nil : ScanReport.Certificate(
                ca: "SHA256:x", caKey: "ssh-ed25519 AAAA", principals: [], serial: pick([0, UInt64.max], index), keyID: "",
                validAfter: 0, validBefore: UInt64.max, criticalOptions: [],
                problem: index % 3 == 0 ? nil : pick(CertificateProblem.allCases, index),
                expiresInDays: index % 4 == 0 ? nil : pick([Int.min, -1, 0, Int.max], index),
                warnings: Array(CertificateWarning.allCases.prefix(index % (CertificateWarning.allCases.count + 1))))
            entry.keys = index % 6 == 5 ? [] : [key, key]
            entry.sshConnection = index % 7 == 6 ? nil : ScanReport.SSHConnection(
                key: index % 3 == 0 ? nil : pick([0, 1, Int.max], index),
                algorithms: index % 2 == 0 ? nil : NegotiatedAlgorithms(hostKey: "h", keyExchange: "k", cipher: "c", mac: "m"),
                error: index % 5 == 0 ? ScanReport.Failure(stage: pick(ProbeStage.allCases, index).rawValue,
                                                           code: pick(FailureCode.allCases, index), message: "m") : nil)
            try assertSameBytes(entry, "case \(index)")
        }
    }

    func testSSHSettingsWithAnyOptionAreWrittenAsTheEncoderWritesThem() throws {
        let base = ScanReport.Host(judgedHost(), generatedAt: "2026-01-01T00:00:00Z")
        var variants: [SSHHostOptions] = [SSHHostOptions(), SSHHostOptions(checkHostIP: false),
                                          SSHHostOptions(globalKnownHostsFiles: [], checkHostIP: true, hashKnownHosts: true, revokedHostKeys: []),
                                          SSHHostOptions(hashKnownHosts: false), SSHHostOptions(hostKeyAlgorithms: "+ssh-rsa"),
                                          SSHHostOptions(hostKeyAlgorithms: "^ssh-ed25519,rsa-sha2-512", revokedHostKeys: ["/etc/ssh/krl"])]
        var every = SSHHostOptions(hostKeyAlgorithms: "-ssh-rsa", globalKnownHostsFiles: ["/g"], checkHostIP: true, hashKnownHosts: false,
                                   revokedHostKeys: ["/r"])
        every.noUserKnownHostsFile = true
        every.caSignatureAlgorithms = "ssh-ed25519"
        every.requiredRSASize = 2048
        every.fingerprintHash = "SHA1\u{1b}"
        every.unjudged = [UnjudgedSetting(keyword: "Match exec", location: nil, why: "runs \"a\"/b"),
                          UnjudgedSetting(keyword: "CanonicalizeHostname", location: SourceLocation(file: "/x/config", line: 3), why: "w")]
        variants.append(every)
        for (index, options) in variants.enumerated() {
            for alias in [nil, "alias/é"] {
                var entry = base
                entry.ssh?.options = options
                entry.ssh?.hostKeyAlias = alias
                try assertSameBytes(entry, "options \(index)")
            }
        }
        var entry = base
        entry.ssh = nil
        try assertSameBytes(entry, "no ssh settings")
    }

    func testTLSEntriesAreWrittenAsTheEncoderWritesThem() throws {
        var entry = ScanReport.Host(judgedHost(), generatedAt: "2026-01-01T00:00:00Z")
        entry.endpointProtocol = .tls
        entry.ssh = nil
        try assertSameBytes(entry, "TLS fields absent")
        entry.tlsSession = ScanReport.TLSSession(version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384", sni: nil, ocspStapled: false,
                                                 handshakeMilliseconds: 3.25, checkedName: "a/\"b\"", nameMatches: true,
                                                 chainValidates: false, chainProblem: "self-signed\n", trustAnchors: "/etc/ssl/certs")
        entry.certificates = []
        entry.expiresInDays = ScanReport.TLSExpiry(leaf: -2, chain: Int.max)
        entry.warnings = CertificateWarning.allCases
        entry.evidence = Self.hostile
        try assertSameBytes(entry, "TLS fields present")
    }

    func testANumberTheEncoderRefusesIsRefusedToo() throws {
        var entry = ScanReport.Host(judgedHost(), generatedAt: "2026-01-01T00:00:00Z")
        for number in [Double.nan, .infinity, -.infinity] {
            entry.keys[0].handshakeMilliseconds = number
            var json = CompactJSON()
            XCTAssertThrowsError(try entry.write(to: &json)) { XCTAssertTrue($0 is CompactJSON.NonFiniteNumber) }
            XCTAssertThrowsError(try encoder.encode(entry))
        }
    }

    func testSharedKeysAreWrittenAsTheEncoderWritesThem() throws {
        let tables = [SharedKeyTable(), SharedKeyTable(entries: [SharedKeyTable.Entry(fingerprint: "SHA256:a", type: "ssh-ed25519", hosts: [])])]
            + Self.hostile.map { text in
                SharedKeyTable(entries: [SharedKeyTable.Entry(fingerprint: text, type: text, hosts: [text, "b", text]),
                                         SharedKeyTable.Entry(fingerprint: "SHA256:b", type: "ssh-rsa", hosts: ["a/b", text])])
            }
        for table in tables {
            XCTAssertEqual(String(decoding: ScanDocumentWriter.compact(table.entries), as: UTF8.self),
                           String(decoding: try encoder.encode(table.entries), as: UTF8.self))
        }
    }

    func testTheWrittenDocumentEqualsTheEncodersLineForLine() throws {
        let judged = judgedHost()
        var entry = ScanReport.Host(judged, generatedAt: "2026-01-01T00:00:00Z")
        var out = Data()
        var writer = ScanDocumentWriter(generatedAt: Date(timeIntervalSince1970: 0), knownHostsFiles: [], pinFiles: [],
                                        sharedKeys: SharedKeyTable()) { out.append($0) }
        try writer.append(judged)
        try writer.finish(skipped: [], exitStatus: 0)
        entry.scannedAt = "1970-01-01T00:00:00Z"
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[3], String(decoding: try encoder.encode(entry), as: UTF8.self))
    }
}
