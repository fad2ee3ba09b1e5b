import Foundation
import Synchronization
import FleetTrustCore
import XCTest

/// The engine's verdict must equal the real `ssh` client's, connecting to a real `sshd`,
/// on many generated known_hosts files.
final class TrustDifferentialTests: XCTestCase {
    struct Case {
        var id: Int
        var text: [UInt8]
        /// Lines for GlobalKnownHostsFile (merged after the user file, as ssh does).
        var globalText: [UInt8]
        var host: String
        var port: Int
        var alias: String?
        var algorithm: String
        var presented: HostKey
        var variant: TrustOracleLab.CertificateVariant
    }

    func testEngineAgreesWithRealSSHOnGeneratedKnownHostsFiles() throws {
        try compare(cases: 360, seed: 20261122, certificates: false)
    }

    func testEngineAgreesWithRealSSHOnHostCertificates() throws {
        try compare(cases: 240, seed: 7_000_003, certificates: true)
    }

    /// The rules of OPENSSH-KNOWN-HOSTS.md one by one: ssh, the spec and the engine must agree.
    func testEngineAgreesWithRealSSHOnSpecEdgeCases() throws {
        let lab = try TrustOracleLab()
        defer { lab.stop() }
        let generator = KnownHostsCaseGenerator(lab: lab, seed: 1)
        let served = lab.served["ed25519"]!, ecdsa = lab.served["ecdsa"]!, rsa = lab.served["rsa"]!
        let noPadding = ecdsa.type + " " + ecdsa.base64.replacingOccurrences(of: "=", with: "")
        let cases: [(String, HostKey, Int, KeyVerdict)] = [
            ("h.example \(generator.securityKeyLine)\n", served, 22, .changed),
            ("h.example \(lab.spare["dsa"]!.openSSHLine)\n", served, 22, .changed),
            ("h.example \(generator.forgedCertificateLine)\n", served, 22, .new),
            ("h.example \(lab.certificates[.valid]!.openSSHLine)\n", served, 22, .changed),
            ("@cert-authority h.example \(served.openSSHLine)\n", served, 22, .new),
            ("h.example \(noPadding)\n", ecdsa, 22, .new),
            ("h.example rsa-sha2-256 \(rsa.base64)\n", rsa, 22, .trusted),
            ("[h.example]:22 \(served.openSSHLine)\n", served, 22, .new),
            ("\(generator.hashed("H.EXAMPLE")) \(served.openSSHLine)\n", served, 22, .new),
            ("\(generator.hashed("[h.example]:2222")) \(served.openSSHLine)\n", served, 2222, .trusted),
            ("*.example \(served.openSSHLine)\n", served, 2222, .trusted),
            ("h.example \(served.openSSHLine)\n@revoked h.example \(served.openSSHLine)\n", served, 2222, .new),
            ("[h.example]:2222 \(served.openSSHLine)\n@revoked h.example \(served.openSSHLine)\n", served, 2222, .trusted),
            ("h.example \(served.openSSHLine)\n[h.example]:2222 \(ecdsa.openSSHLine)\n", served, 2222, .changed),
            ("@revoked\th.example \(served.openSSHLine)\nh.example \(served.openSSHLine)\n", served, 22, .trusted),
            ("@revoked\th.example\t\(served.type)\t\(served.base64)\nh.example \(served.openSSHLine)\n", served, 22, .revoked),
            ("h.example,\(String(repeating: "a", count: 1023)) \(served.openSSHLine)\n", served, 22, .new),
            ("h.example \(ecdsa.openSSHLine)\r\nh.example \(served.openSSHLine)\r\n", served, 22, .trusted),
        ]
        for (index, (text, key, port, expected)) in cases.enumerated() {
            let path = "\(lab.directory.path)/spec\(index)"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let algorithm = key == rsa ? "rsa-sha2-512" : key.type
            let ssh = try lab.sshVerdict(knownHosts: path, host: "h.example", port: port, alias: nil, algorithm: algorithm, variant: .valid)
            let judgement = KnownHostsJudge(knownHosts: KnownHosts(files: [KnownHostsFile(path: path, bytes: Array(text.utf8))]))
                .judge(key, for: ConnectionTarget(host: "h.example", port: port))
            XCTAssertEqual(ssh.verdict, expected, "ssh, case \(index)")
            if let stricter = judgement.stricterThanSSH {
                XCTAssertTrue(judgement.verdict.isAlarm, "engine, case \(index): a documented stricter choice (\(stricter)) is an alarm")
            } else {
                XCTAssertEqual(judgement.verdict, expected, "engine, case \(index)")
            }
        }
    }

    private func compare(cases count: Int, seed: UInt64, certificates: Bool) throws {
        let lab = try TrustOracleLab()
        defer { lab.stop() }
        var generator = KnownHostsCaseGenerator(lab: lab, seed: seed)
        let cases = (0..<count).map { generator.makeCase(id: $0, certificate: certificates) }
        let directory = lab.directory.path
        for item in cases {
            _ = FileManager.default.createFile(atPath: "\(directory)/kh\(item.id)", contents: Data(item.text))
            _ = FileManager.default.createFile(atPath: "\(directory)/global\(item.id)", contents: Data(item.globalText))
        }
        let results = Mutex<[Int: (verdict: KeyVerdict?, messages: String)]>([:])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for item in cases where item.id % 4 == worker {
                let outcome = try? lab.sshVerdict(knownHosts: "\(directory)/kh\(item.id)", globalKnownHosts: "\(directory)/global\(item.id)", host: item.host, port: item.port,
                                                  alias: item.alias, algorithm: item.algorithm, variant: item.variant)
                results.withLock { $0[item.id] = outcome ?? (nil, "ssh did not run") }
            }
        }
        let oracle = results.withLock { $0 }
        var mismatches: [String] = []
        var tally: [String: Int] = [:]
        let now = UInt64(Date().timeIntervalSince1970)
        for item in cases {
            let files = [KnownHostsFile(path: "kh\(item.id)", bytes: item.text), KnownHostsFile(path: "global\(item.id)", bytes: item.globalText)]
            let judge = KnownHostsJudge(knownHosts: KnownHosts(files: files))
            let target = ConnectionTarget(host: item.host, port: item.port, hostKeyAlias: item.alias)
            let judgement = judge.judge(item.presented, for: target, now: now)
            let ours = judgement.verdict
            let theirs = oracle[item.id]?.verdict
            tally[theirs?.rawValue ?? "unclassified", default: 0] += 1
            if let stricter = judgement.stricterThanSSH, ours.isAlarm, theirs != nil {
                tally["fleettrust stricter: \(stricter.rawValue)", default: 0] += 1
            } else if ours != theirs {
                let shown = String(decoding: item.text + Array("=== global:\n".utf8) + item.globalText, as: UTF8.self).replacingOccurrences(of: "\0", with: "\\0")
                    .replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\t", with: "\\t")
                mismatches.append("case \(item.id): ssh=\(theirs?.rawValue ?? "?") ours=\(ours.rawValue) host=\(item.host) port=\(item.port) alias=\(item.alias ?? "-") alg=\(item.algorithm) variant=\(item.variant)\n\(shown)ssh said:\n\(oracle[item.id]?.messages ?? "")")
            }
        }
        print("differential tally (ssh verdicts): \(tally.sorted { $0.key < $1.key })")
        XCTAssertTrue(mismatches.isEmpty, "\(mismatches.count) of \(cases.count) cases differ:\n" + mismatches.prefix(15).joined(separator: "\n---\n"))
        XCTAssertGreaterThan(tally.count, 3, "the generated cases should cover several verdicts")
    }
}
