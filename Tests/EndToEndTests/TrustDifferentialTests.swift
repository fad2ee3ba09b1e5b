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

    private func compare(cases count: Int, seed: UInt64, certificates: Bool) throws {
        let lab = try TrustOracleLab()
        defer { lab.stop() }
        var generator = KnownHostsCaseGenerator(lab: lab, seed: seed)
        let cases = (0..<count).map { generator.makeCase(id: $0, certificate: certificates) }
        let directory = lab.directory.path
        for item in cases {
            _ = FileManager.default.createFile(atPath: "\(directory)/kh\(item.id)", contents: Data(item.text))
        }
        let results = Mutex<[Int: (verdict: KeyVerdict?, messages: String)]>([:])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for item in cases where item.id % 4 == worker {
                let outcome = try? lab.sshVerdict(knownHosts: "\(directory)/kh\(item.id)", host: item.host, port: item.port,
                                                  alias: item.alias, algorithm: item.algorithm, variant: item.variant)
                results.withLock { $0[item.id] = outcome ?? (nil, "ssh did not run") }
            }
        }
        let oracle = results.withLock { $0 }
        var mismatches: [String] = []
        var tally: [String: Int] = [:]
        let now = UInt64(Date().timeIntervalSince1970)
        for item in cases {
            let file = KnownHostsFile(path: "kh\(item.id)", bytes: item.text)
            let judge = KnownHostsJudge(knownHosts: KnownHosts(files: [file]))
            let target = ConnectionTarget(host: item.host, port: item.port, hostKeyAlias: item.alias)
            let ours = try judge.judge(item.presented, for: target, now: now).verdict
            let theirs = oracle[item.id]?.verdict
            tally[theirs?.rawValue ?? "unclassified", default: 0] += 1
            if ours != theirs {
                let shown = String(decoding: item.text, as: UTF8.self).replacingOccurrences(of: "\0", with: "\\0")
                    .replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\t", with: "\\t")
                mismatches.append("case \(item.id): ssh=\(theirs?.rawValue ?? "?") ours=\(ours.rawValue) host=\(item.host) port=\(item.port) alias=\(item.alias ?? "-") alg=\(item.algorithm) variant=\(item.variant)\n\(shown)ssh said:\n\(oracle[item.id]?.messages ?? "")")
            }
        }
        print("differential tally (ssh verdicts): \(tally.sorted { $0.key < $1.key })")
        XCTAssertTrue(mismatches.isEmpty, "\(mismatches.count) of \(cases.count) cases differ:\n" + mismatches.prefix(15).joined(separator: "\n---\n"))
        XCTAssertGreaterThan(tally.count, 3, "the generated cases should cover several verdicts")
    }
}
