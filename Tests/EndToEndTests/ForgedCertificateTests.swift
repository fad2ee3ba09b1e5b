import Foundation
import Synchronization
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// An attacker who holds no CA key presents its own plain key plus a host certificate over it whose
/// CA signature is forged (a real `ssh-keygen -s` certificate with one bit of the signature
/// flipped), for every certified key type × CA type, and one certificate relabelled to SHA-1
/// `ssh-rsa`. Whatever is recorded for the host, fleettrust must raise an alarm (exit 2) and call
/// the certificate invalid, and the real `ssh` must refuse the same server.
final class ForgedCertificateTests: XCTestCase {
    /// One fake server: what it presents and the key the real host holds.
    struct Impostor {
        var name: String
        /// The attacker's key (lab name): certified by the forged certificate and served plain too.
        var key: String
        /// The real host's key of the same type (lab name).
        var realKey: String
        var relabelled: Bool
        var port = 0
    }

    private static let types = ["ed", "ec", "rsa"]

    private var lab: ServerLab?
    private var servers: [FakeKeyServer] = []

    override func tearDown() {
        for server in servers { server.stop() }
        servers = []
        lab?.stop()
    }

    private static func certificateAlgorithms(_ key: String) -> [String] {
        switch key {
        case "ed": return ["ssh-ed25519-cert-v01@openssh.com"]
        case "ec": return ["ecdsa-sha2-nistp256-cert-v01@openssh.com"]
        default: return ["rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com"]
        }
    }

    private static let plainAlgorithms = ["ed": ["ssh-ed25519"], "ec": ["ecdsa-sha2-nistp256"], "rsa": ["rsa-sha2-512", "rsa-sha2-256"]]

    /// Starts the ten servers (five at a time: Python takes a while to start).
    private func startImpostors(lab: ServerLab) throws -> [Impostor] {
        var impostors: [Impostor] = []
        var keys: [[FakeHostKey]] = []
        for key in Self.types {
            for ca in Self.types {
                let name = "forged-\(key)-by-\(ca)"
                let certificate = try KeyFiles.certify(publicKeyPath: lab.path(key) + ".pub", caPath: lab.path("ca-\(ca)"), identity: name,
                                                       principals: ["127.0.0.1"], output: lab.path("\(name)-cert.pub"))
                let forged = try OddCertificates.forged(try KeyFiles.blob(publicKeyFile: certificate))
                impostors.append(Impostor(name: name, key: key, realKey: key + "2", relabelled: false))
                keys.append([FakeHostKey(privateKeyPath: lab.path(key), presentedBlob: forged, algorithms: Self.certificateAlgorithms(key)),
                             try FakeHostKey.plain(lab.path(key), algorithms: Self.plainAlgorithms[key]!)])
            }
        }
        let name = "relabelled-rsa-by-rsa"
        let certificate = try KeyFiles.certify(publicKeyPath: lab.path("rsa.pub"), caPath: lab.path("ca-rsa"), identity: name,
                                               principals: ["127.0.0.1"], output: lab.path("\(name)-cert.pub"))
        let relabelled = try OddCertificates.relabelledToSHA1(try KeyFiles.blob(publicKeyFile: certificate))
        impostors.append(Impostor(name: name, key: "rsa", realKey: "rsa2", relabelled: true))
        keys.append([FakeHostKey(privateKeyPath: lab.path("rsa"), presentedBlob: relabelled, algorithms: Self.certificateAlgorithms("rsa")),
                     try FakeHostKey.plain(lab.path("rsa"), algorithms: Self.plainAlgorithms["rsa"]!)])

        let started = Mutex<[Int: Result<FakeKeyServer, Error>]>([:])
        let jobs = keys
        DispatchQueue.concurrentPerform(iterations: 5) { worker in
            for index in jobs.indices where index % 5 == worker {
                let result = Result { try FakeKeyServer(keys: jobs[index]) }
                started.withLock { $0[index] = result }
            }
        }
        let results = started.withLock { $0 }
        for index in jobs.indices {
            if case .success(let server) = results[index] { servers.append(server) }
        }
        for index in jobs.indices {
            switch results[index]! {
            case .success(let server): impostors[index].port = server.port
            case .failure(let error): throw error
            }
        }
        return impostors
    }

    /// The inventory, also the real ssh's configuration: every impostor under its own name, every
    /// lookup in `knownHosts` only.
    private func writeConfig(_ impostors: [Impostor], knownHosts: String, to path: String) throws {
        var text = impostors.map { "Host \($0.name)\n  HostName 127.0.0.1\n  Port \($0.port)\n" }.joined()
        text += "Host *\n  UserKnownHostsFile \(knownHosts)\n  GlobalKnownHostsFile /dev/null\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func testAForgedCertificateIsAnAlarmWhateverIsRecordedAndSSHRefusesIt() throws {
        let started = Date()
        let lab = try ServerLab()
        self.lab = lab
        let impostors = try startImpostors(lab: lab)
        print("forged certificates: \(servers.count) servers up after \(Int(Date().timeIntervalSince(started))) s")

        // (a) known_hosts records the real host's key; (b) nothing recorded, the real key pinned; (c) nothing at all.
        struct Situation {
            var label: String
            var knownHosts: String
            var pins: String?
            var status: HostStatus
            /// The attacker's plain key's verdict.
            var plainVerdict: KeyVerdict
        }
        let recorded = lab.path("known_hosts-real"), empty = lab.path("known_hosts-empty"), pins = lab.path("pins-real")
        try impostors.map { "[127.0.0.1]:\($0.port) \(try lab.publicLine($0.realKey))\n" }.joined()
            .write(toFile: recorded, atomically: true, encoding: .utf8)
        try "".write(toFile: empty, atomically: true, encoding: .utf8)
        try impostors.map { impostor -> String in
            let real = try HostKey(openSSHLine: try lab.publicLine(impostor.realKey))
            return "\(impostor.name) \(real.sha256Fingerprint)\n"
        }.joined().write(toFile: pins, atomically: true, encoding: .utf8)
        let situations = [
            Situation(label: "(a) real key recorded", knownHosts: recorded, pins: nil, status: .changed, plainVerdict: .changed),
            Situation(label: "(b) real key pinned", knownHosts: empty, pins: pins, status: .pinMismatch, plainVerdict: .new),
            Situation(label: "(c) nothing recorded", knownHosts: empty, pins: nil, status: .invalidCertificate, plainVerdict: .new),
        ]

        for (number, situation) in situations.enumerated() {
            let config = lab.path("config-\(number)")
            try writeConfig(impostors, knownHosts: situation.knownHosts, to: config)
            var arguments = ["scan", "--format", "json", "--inventory", config, "--inventory-format", "ssh-config",
                             "--known-hosts", situation.knownHosts, "--timeout", "10"]
            if let pins = situation.pins { arguments += ["--pins", pins] }
            let run = try ProgramRun.run(BuiltProducts.fleettrust, arguments, limit: 120)
            XCTAssertEqual(run.status, 2, "\(situation.label): scan exits 2\n\(run.stderrText)")
            guard let report = try? RecordedScan.decode(Data(run.stdout)) else {
                XCTFail("\(situation.label): no scan document (status \(run.status)): \(run.stderrText)")
                continue
            }
            XCTAssertEqual(report.summary.exitStatus, 2, situation.label)
            let rows = Dictionary(report.hosts.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            XCTAssertEqual(report.hosts.count, impostors.count, situation.label)

            for impostor in impostors {
                let what = "\(situation.label), \(impostor.name)"
                guard let row = rows[impostor.name] else { XCTFail("\(what): not reported"); continue }
                let summary = "\(row.status.rawValue): \(row.reason); keys \(row.keys.map { "\($0.type)=\($0.verdict.rawValue)" })"
                XCTAssertEqual(row.status, situation.status, "\(what): \(summary)")
                if situation.pins != nil { XCTAssertEqual(row.pin?.verdict, .mismatch, "\(what): \(summary)") }
                let certificates = row.keys.filter { $0.type.hasSuffix("-cert-v01@openssh.com") }
                XCTAssertEqual(certificates.count, 1, "\(what): the certificate is reported: \(summary)")
                for certificate in certificates {
                    XCTAssertEqual(certificate.verdict, .invalidCertificate, "\(what): \(summary)")
                    if impostor.relabelled {
                        // Relabelled: the signature no longer verifies (or, where it is not even read, it cannot be decoded).
                        XCTAssertTrue(certificate.certificate == nil || certificate.certificate?.problem == .badSignature,
                                      "\(what): relabelled certificate's problem \(String(describing: certificate.certificate?.problem))")
                    } else {
                        XCTAssertEqual(certificate.certificate?.problem, .badSignature, "\(what): \(summary)")
                    }
                    XCTAssertNil(row.method, "\(what): nothing vouches for the host")
                }
                let attacker = try HostKey(openSSHLine: try lab.publicLine(impostor.key))
                let plain = row.keys.first { $0.type == attacker.type && !$0.type.hasSuffix("-cert-v01@openssh.com") }
                XCTAssertEqual(plain?.fingerprint, attacker.sha256Fingerprint, "\(what): the attacker's plain key is reported")
                XCTAssertEqual(plain?.verdict, situation.plainVerdict, "\(what): \(summary)")
            }

            // The real ssh, through the same file as its configuration, refuses every impostor.
            let findings = Mutex<[String: SSHOracle.Handshake]>([:])
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for (index, impostor) in impostors.enumerated() where index % 4 == worker {
                    let handshake = (try? SSHOracle.handshake(host: impostor.name, config: config))
                        ?? SSHOracle.classifyHandshake("ssh did not run")
                    findings.withLock { $0[impostor.name] = handshake }
                }
            }
            let ssh = findings.withLock { $0 }
            for impostor in impostors {
                let handshake = ssh[impostor.name]!
                let what = "\(situation.label), \(impostor.name): ssh \(handshake.finding.rawValue): \(handshake.finalMessage)"
                XCTAssertFalse([.accepted, .acceptedByCA].contains(handshake.finding), what)
                // ssh 9.2: `incorrect signature` (`error in libcrypto` for an RSA CA) for a forged signature,
                // `invalid format` for one relabelled to SHA-1 (ORACLE-FINDINGS rows 1-4).
                XCTAssertEqual(handshake.finding, impostor.relabelled ? .invalidFormat : .incorrectSignature, "\(what)\n\(handshake.transcript)")
            }
            print("forged certificates: \(situation.label) checked after \(Int(Date().timeIntervalSince(started))) s")
        }
        for server in servers { XCTAssertEqual(server.log, "", "the fake server logged no errors") }
    }
}
