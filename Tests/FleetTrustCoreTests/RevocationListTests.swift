import FleetTrustTestFleet
import Foundation
import XCTest
@testable import FleetTrustCore

/// `RevokedHostKeys` files: KRLs written by the real `ssh-keygen -k` from every kind of
/// specification, judged key by key against `ssh-keygen -Q` as the oracle; plain key lists; and
/// corrupt KRLs (every truncation, random byte changes, hand-made bad fields), which must give a
/// typed error exactly where `ssh-keygen` refuses the file, and never a crash.
final class RevocationListTests: XCTestCase {
    private var directory = ""
    /// Public key files by name: plain keys, and certificates with several serials, ids and CAs.
    private var keyFiles: [String] = []

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "ft-krl-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, args) in [("k1", ["-t", "ed25519"]), ("k2", ["-t", "ecdsa", "-b", "256"]), ("k3", ["-t", "rsa", "-b", "2048"]),
                             ("spare", ["-t", "ed25519"]), ("ca", ["-t", "ed25519"]), ("ca2", ["-t", "ecdsa", "-b", "384"])] {
            _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-N", "", "-f", path(name)] + args)
        }
        keyFiles = ["k1", "k2", "k3", "spare", "ca", "ca2"].map { path($0) + ".pub" }
        let certificates: [(key: String, ca: String, serial: UInt64, id: String)] = [
            ("k1", "ca", 5, "web-5"), ("k2", "ca", 100, "db"), ("k1", "ca2", 5, "web-5"), ("spare", "ca", 0, "zero"),
            ("spare", "ca", 4, "four"), ("k3", "ca", 201, "rsa-201"), ("k3", "ca2", 18_446_744_073_709_551_615, "top"),
        ]
        for (index, certificate) in certificates.enumerated() {
            let base = path("cert\(index)")
            try FileManager.default.copyItem(atPath: path(certificate.key) + ".pub", toPath: base + ".pub")
            _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-s", path(certificate.ca), "-I", certificate.id, "-h", "-n", "web",
                                                     "-z", String(certificate.serial), base + ".pub"])
            keyFiles.append(base + "-cert.pub")
        }
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: directory) }

    private func path(_ name: String) -> String { directory + "/" + name }

    private func line(_ name: String) throws -> String {
        try String(contentsOfFile: path(name) + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func key(_ file: String) throws -> HostKey { try HostKey(openSSHLine: String(contentsOfFile: file, encoding: .utf8)) }

    /// `ssh-keygen -k` from a specification, with `-s CA` (or `-s none`, any CA) when given.
    private func krl(_ name: String, _ specification: String, ca: String? = nil) throws -> String {
        let spec = path(name + ".spec"), output = path(name + ".krl")
        try specification.write(toFile: spec, atomically: true, encoding: .utf8)
        let run = try Tool.run("/usr/bin/ssh-keygen", ["-k", "-f", output] + (ca.map { ["-s", $0 == "none" ? "none" : path($0) + ".pub"] } ?? []) + [spec])
        XCTAssertEqual(run.status, 0, run.stderr)
        return output
    }

    /// What `ssh-keygen -Q` says of each key file: revoked or not; nil when it refuses the KRL.
    private func oracle(_ krl: String) throws -> [Bool]? {
        let run = try Tool.run("/usr/bin/ssh-keygen", ["-Q", "-f", krl] + keyFiles)
        let lines = run.stdout.split(separator: "\n")
        guard run.status != 255, lines.count == keyFiles.count else { return nil }
        return lines.map { $0.hasSuffix(": REVOKED") }
    }

    private func ours(_ krl: String) throws -> [Bool] {
        let list = try RevocationList.read(path: krl)
        XCTAssertEqual(list.form, .krl)
        return try keyFiles.map { list.revocation(of: try key($0)) != nil }
    }

    func testEveryKindOfKRLSpecificationRevokesExactlyWhatSshKeygenSaysItRevokes() throws {
        var evenSerials = ""
        for serial in stride(from: 2, through: 300, by: 2) { evenSerials += "serial: \(serial)\n" }
        let cases: [(String, String, String?)] = [
            ("key", "key: \(try line("k1"))\n", nil),
            ("sha1", "sha1: \(try line("k2"))\n", nil),
            ("sha256", "sha256: \(try line("k3"))\n", nil),
            ("hash", "hash: \(try key(path("k1") + ".pub").sha256Fingerprint)\n", nil),
            ("serial", "serial: 5\n", "ca"),
            ("range", "serial: 90-210\n", "ca"),
            ("bitmap", evenSerials, "ca"),
            ("top-serial", "serial: 18446744073709551615\n", "ca2"),
            ("id", "id: db\nid: zero\n", "ca"),
            ("any-ca", "serial: 5\nid: top\n", "none"),
            ("ca-key", "key: \(try line("ca"))\n", nil),
            ("certificate-as-key", "key: \(try String(contentsOfFile: keyFiles[6], encoding: .utf8))", nil),
            ("everything", "key: \(try line("spare"))\nsha1: \(try line("ca2"))\nserial: 1-4\nid: rsa-201\n", "ca"),
        ]
        var revokedSomewhere = 0
        for (name, specification, ca) in cases {
            let file = try krl(name, specification, ca: ca)
            let expected = try XCTUnwrap(try oracle(file), name)
            XCTAssertEqual(try ours(file), expected, name)
            XCTAssertTrue(expected.contains(true), "\(name) revokes something")
            revokedSomewhere += expected.filter { $0 }.count
        }
        XCTAssertGreaterThan(revokedSomewhere, 20)
    }

    func testARevocationNamesTheFileAndWhetherTheCertificateOrItsCAWasRevoked() throws {
        let byID = try RevocationList.read(path: try krl("id", "id: db\n", ca: "ca"))
        let certificate = try key(keyFiles[7])
        let revocation = try XCTUnwrap(byID.revocation(of: certificate))
        XCTAssertEqual(revocation.match, .keyID("db"))
        XCTAssertEqual(revocation.path, path("id.krl"))
        XCTAssertFalse(revocation.isCertificateAuthority)
        let byCA = try RevocationList.read(path: try krl("ca", "key: \(try line("ca"))\n"))
        let viaCA = try XCTUnwrap(byCA.revocation(of: certificate))
        XCTAssertTrue(viaCA.isCertificateAuthority)
        XCTAssertEqual(viaCA.revokedKey, try key(path("ca") + ".pub"))
        XCTAssertEqual(viaCA.match, .explicitKey)
    }

    func testAPlainKeyListRevokesListedKeysCertificatesOfThemAndCertificatesOfListedCAs() throws {
        let list = try RevocationList.parse(path: "revoked", bytes: Array("""
            # retired hosts

              \(try line("k1")) old web
            \(try line("ca2"))
            """.utf8))
        XCTAssertEqual(list.form, .keyList)
        XCTAssertEqual(list.revocation(of: try key(path("k1") + ".pub"))?.match, .listedKey(line: 3))
        XCTAssertNil(list.revocation(of: try key(path("k2") + ".pub")))
        XCTAssertEqual(list.revocation(of: try key(keyFiles[6]))?.match, .listedKey(line: 3), "a certificate of a listed key")
        XCTAssertEqual(list.revocation(of: try key(keyFiles[12]))?.isCertificateAuthority, true, "a certificate from a listed CA")
        XCTAssertNil(list.revocation(of: try key(keyFiles[7])))
    }

    func testALineThatIsNotAKeyFailsTheWholeListAsSshDoes() throws {
        let text = "\(try line("k1"))\n# fine\nweb.example \(try line("k2"))\n"
        XCTAssertThrowsError(try RevocationList.parse(path: "revoked", bytes: Array(text.utf8))) { error in
            guard case .badKeyLine(line: 3, _)? = (error as? RevocationListError)?.problem else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".hasPrefix("revoked:3: not a public key"), "\(error)")
        }
    }

    func testAMissingFileIsATypedErrorNamingIt() {
        XCTAssertThrowsError(try RevocationList.read(path: path("absent"))) { error in
            XCTAssertEqual((error as? RevocationListError)?.path, path("absent"))
            XCTAssertTrue("\(error)".contains("no such file"), "\(error)")
        }
    }

    func testEveryTruncationOfAKRLIsReadOrRefusedExactlyAsSshKeygenDecides() throws {
        let file = try krl("everything", "key: \(try line("spare"))\nsha1: \(try line("ca2"))\nsha256: \(try line("k2"))\n"
                                         + "serial: 1-4\nserial: 7\nserial: 9\nid: rsa-201\n", ca: "ca")
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: file).map { Array($0) })
        var refused = 0
        for length in KRLParser.magic.count..<bytes.count {
            let cut = path("cut.krl")
            try Data(bytes.prefix(length)).write(to: URL(fileURLWithPath: cut))
            let expected = try oracle(cut)
            do {
                let list = try RevocationList.read(path: cut)
                XCTAssertEqual(try keyFiles.map { list.revocation(of: try key($0)) != nil }, expected, "cut at \(length)")
            } catch {
                refused += 1
                XCTAssertNil(expected, "cut at \(length): ssh-keygen reads what fleettrust refuses (\(error))")
            }
        }
        XCTAssertGreaterThan(refused, bytes.count * 9 / 10, "a cut inside a field is refused")
    }

    func testRandomlyDamagedKRLsAreAcceptedOrRefusedExactlyAsSshKeygenDecides() throws {
        let file = try krl("damaged", "key: \(try line("spare"))\nsha1: \(try line("ca2"))\nhash: \(try key(path("k2") + ".pub").sha256Fingerprint)\n"
                                      + "serial: 1-4\nserial: 100\nid: rsa-201\n", ca: "ca")
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: file).map { Array($0) })
        var generator = SeededGenerator(seed: 23)
        var refused = 0
        for round in 0..<120 {
            var damaged = bytes
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                damaged[Int.random(in: KRLParser.magic.count..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let cut = path("damaged-\(round).krl")
            try Data(damaged).write(to: URL(fileURLWithPath: cut))
            let expected = try oracle(cut)
            do {
                let list = try RevocationList.read(path: cut)
                let answers = try keyFiles.map { list.revocation(of: try key($0)) != nil }
                XCTAssertEqual(answers, expected, "round \(round): ssh-keygen \(expected == nil ? "refuses" : "reads") the KRL differently")
            } catch let error as RevocationListError {
                refused += 1
                XCTAssertNil(expected, "round \(round): ssh-keygen reads the KRL fleettrust refuses (\(error))")
            }
        }
        XCTAssertGreaterThan(refused, 10)
    }

    /// Thousands of KRLs damaged harder (lengths set huge, bytes inserted and dropped, cut short):
    /// each is read or refused with a typed error, within bounds, never a crash or a hang.
    func testHeavilyDamagedKRLsNeverCrashTheParser() throws {
        var evenSerials = "key: \(try line("spare"))\nsha256: \(try line("k2"))\nid: a\nid: b\n"
        for serial in stride(from: 2, through: 400, by: 2) { evenSerials += "serial: \(serial)\n" }
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: try krl("fuzz", evenSerials, ca: "ca")).map { Array($0) })
        var generator = SeededGenerator(seed: 0x4b52_4c)
        var read = 0, refused = 0
        let started = Date()
        for _ in 0..<3000 {
            var damaged = bytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let at = Int.random(in: KRLParser.magic.count..<damaged.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: damaged.replaceSubrange(at..<min(at + 4, damaged.count), with: [0x7F, 0xFF, 0xFF, Int.random(in: 0...255, using: &generator)].map(UInt8.init))
                case 1: damaged.insert(contentsOf: (0..<Int.random(in: 1...9, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }, at: at)
                case 2: damaged.removeSubrange(at..<min(at + Int.random(in: 1...9, using: &generator), damaged.count))
                default: damaged = Array(damaged.prefix(at))
                }
                if damaged.count <= KRLParser.magic.count { break }
            }
            do {
                _ = try RevocationList.parse(path: "fuzz", bytes: damaged)
                read += 1
            } catch {
                refused += 1
            }
        }
        XCTAssertEqual(read + refused, 3000)
        XCTAssertGreaterThan(refused, 2000)
        XCTAssertLessThan(Date().timeIntervalSince(started), 60)
    }

    /// Appends signature sections to a KRL, as `ssh_krl_to_blob` writes them: the signing key, then
    /// its signature over everything before it (`ssh-keygen` 9.2 writes no signed KRLs itself).
    private func sign(_ krl: String, with signers: [String], damage: Bool = false, trailingSection: Bool = false) throws -> String {
        let output = krl + ".signed-\(signers.joined(separator: "-"))\(damage ? "-damaged" : "")\(trailingSection ? "-trailing" : "")"
        let script = """
            import sys, struct
            from cryptography.hazmat.primitives import serialization as S
            def string(b): return struct.pack(">I", len(b)) + b
            krl, out, damage, trailing = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
            data = open(krl, "rb").read()
            for path in sys.argv[5:]:
                key = S.load_ssh_private_key(open(path, "rb").read(), None)
                raw = key.public_key().public_bytes(S.Encoding.Raw, S.PublicFormat.Raw)
                data += b"\\x04" + string(string(b"ssh-ed25519") + string(raw))
                signature = bytearray(key.sign(data))
                if damage: signature[5] ^= 1
                data += string(string(b"ssh-ed25519") + string(bytes(signature)))
            if trailing: data += b"\\x02" + string(b"")
            open(out, "wb").write(data)
            """
        let run = try Tool.run("/usr/bin/python3", ["-c", script, krl, output, damage ? "1" : "0", trailingSection ? "1" : "0"] + signers.map(path))
        XCTAssertEqual(run.status, 0, run.stderr)
        return output
    }

    func testSignedKRLsAreVerifiedAsSshKeygenVerifiesThem() throws {
        _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-N", "", "-t", "ed25519", "-f", path("signer")])
        _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-N", "", "-t", "ed25519", "-f", path("signer2")])
        let plain = try krl("plain", "key: \(try line("k1"))\nserial: 100\n", ca: "ca")
        let signed = try sign(plain, with: ["signer", "signer2"])
        XCTAssertEqual(try ours(signed), try XCTUnwrap(try oracle(signed)), "a good signature: read, and the same answers")
        let selfRevoking = try sign(try krl("self", "key: \(try line("signer"))\n"), with: ["signer"])
        let cases: [(String, String, RevocationListError.Problem?)] = [
            ("damaged signature", try sign(plain, with: ["signer"], damage: true), nil),
            ("signed twice by one key", try sign(plain, with: ["signer", "signer"]), .badSignature("the KRL is signed twice with the same key")),
            ("a section after the signature", try sign(plain, with: ["signer"], trailingSection: true),
             .badSignature("a KRL section follows its signature")),
            ("every signer revoked", selfRevoking, .signersRevoked),
        ]
        for (label, file, problem) in cases {
            XCTAssertNil(try oracle(file), "\(label): ssh-keygen refuses it")
            XCTAssertThrowsError(try RevocationList.read(path: file), label) { error in
                guard let problem else {
                    guard case .badSignature? = (error as? RevocationListError)?.problem else { return XCTFail("\(label): \(error)") }
                    return
                }
                XCTAssertEqual((error as? RevocationListError)?.problem, problem, label)
            }
        }
    }

    func testHandMadeBadFieldsGiveTypedErrors() {
        func document(version: UInt32 = 1, sections: (inout SSHWireWriter) -> Void) -> [UInt8] {
            var writer = SSHWireWriter()
            writer.writeRaw(KRLParser.magic)
            writer.writeUInt32(version)
            writer.writeUInt64(1)
            writer.writeUInt64(0)
            writer.writeUInt64(0)
            writer.writeString("")
            writer.writeString("comment")
            sections(&writer)
            return writer.bytes
        }
        func certificates(_ subsection: UInt8, _ body: [UInt8]) -> (inout SSHWireWriter) -> Void {
            { writer in
                var section = SSHWireWriter()
                section.writeString([UInt8]())
                section.writeString([UInt8]())
                section.writeByte(subsection)
                section.writeString(body)
                writer.writeByte(1)
                writer.writeString(section.bytes)
            }
        }
        func problem(_ bytes: [UInt8]) -> RevocationListError.Problem? {
            do {
                _ = try RevocationList.parse(path: "k", bytes: bytes)
                return nil
            } catch {
                return error.problem
            }
        }
        XCTAssertEqual(problem(document(version: 2) { _ in }), .unsupportedVersion(2))
        XCTAssertEqual(problem(document { $0.writeByte(2); $0.writeUInt32(0xFFFF_FFFF) }), .oversized)
        XCTAssertEqual(problem(document { $0.writeByte(9); $0.writeString([UInt8]()) }), .unknownSection(9))
        XCTAssertEqual(problem(document { $0.writeByte(3); $0.writeString([0, 0, 0, 4, 1, 2, 3, 4]) }),
                       .malformed("a 160-bit hash has 4 bytes"))
        XCTAssertEqual(problem(document(sections: certificates(0x20, [0, 0, 0, 0, 0, 0, 0, 0]))), .malformed("a revoked serial is 0"))
        XCTAssertEqual(problem(document(sections: certificates(0x20, [0, 0, 0, 0, 0, 0, 0, 1, 0]))), .truncated)
        XCTAssertEqual(problem(document(sections: certificates(0x21, [0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 2]))),
                       .malformed("a serial range 9-2 is reversed"))
        XCTAssertEqual(problem(document(sections: certificates(0x22, [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0x80]))),
                       .malformed("a serial bitmap is negative"))
        XCTAssertEqual(problem(document(sections: certificates(0x22, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1, 0x03]))),
                       .malformed("a serial bitmap wraps past the largest serial"))
        XCTAssertEqual(problem(document(sections: certificates(0x22, [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0x0B, 0xB8] + Array(repeating: 1, count: 3000)))),
                       .oversized)
        XCTAssertEqual(problem(document(sections: certificates(0x23, [0, 0, 0, 3, 0x61, 0, 0x62]))), .malformed("a string contains a NUL byte"))
        XCTAssertEqual(problem(document(sections: certificates(0x24, []))), .unknownSection(0x24))
        XCTAssertEqual(problem(document { $0.writeByte(4); $0.writeString([0, 0, 0, 1, 0x78]) }), .badKey("unknown key type x"))
        XCTAssertNil(problem(document { _ in }), "a KRL with no sections revokes nothing, and is fine")
        XCTAssertEqual(try KRLParser.bitmapRanges(offset: .max, bitmap: [0x01]), [UInt64.max...UInt64.max],
                       "the largest serial itself does not wrap")
        XCTAssertEqual(try KRLParser.bitmapRanges(offset: 10, bitmap: [0x00, 0b1011_0001]), [10...10, 14...15, 17...17])
    }
}

/// `RevokedHostKeys` as `ssh` 9.2 reads it, from ssh_config and from Ansible's `-o` options: the
/// first value wins, `none` means no file, and the path is used as written (no `~` or `%` expansion).
final class RevokedHostKeysReaderTests: XCTestCase {
    func testSSHConfigTakesTheFirstValueAndNoneMeansNoFile() {
        let inventory = InventoryFixtures.read(text: """
            Host web
              RevokedHostKeys /etc/ssh/revoked.krl
            Host off
              RevokedHostKeys none
            Host *
              RevokedHostKeys ~/.ssh/revoked_%h
            Host plain
            """, format: .sshConfig)
        XCTAssertEqual(inventory["web"]?.sshOptions.revokedHostKeys, ["/etc/ssh/revoked.krl"], "the first value obtained wins")
        XCTAssertEqual(inventory["off"]?.sshOptions.revokedHostKeys, [], "none: no file")
        XCTAssertEqual(inventory["plain"]?.sshOptions.revokedHostKeys, ["~/.ssh/revoked_%h"], "used as ssh 9.2 uses it: as written")
    }

    func testAnsibleSSHArgumentsCarryTheOption() {
        let inventory = InventoryFixtures.read(text: """
            [web]
            a ansible_ssh_common_args="-o RevokedHostKeys=/srv/revoked.krl"
            b ansible_ssh_extra_args="-oRevokedHostKeys=none"
            c
            """, format: .ansibleINI)
        XCTAssertEqual(inventory["a"]?.sshOptions.revokedHostKeys, ["/srv/revoked.krl"])
        XCTAssertEqual(inventory["b"]?.sshOptions.revokedHostKeys, [])
        XCTAssertNil(inventory["c"]?.sshOptions.revokedHostKeys)
    }
}
