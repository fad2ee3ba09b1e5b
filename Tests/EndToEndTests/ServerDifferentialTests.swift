import Foundation
import Synchronization
import XCTest
import FleetTrustTestFleet

/// The real `ssh` (OpenSSH 9.2, `StrictHostKeyChecking=yes`) against servers that serve what a stock
/// sshd refuses to (forged, undecodable, user or SHA-1 certificates, SHA-1-only RSA, short RSA),
/// and `fleettrust scan` as a black box on the same inventory and known_hosts: fleettrust must never
/// be quieter than ssh, and louder only where this file's allow-list documents why. The scan runs
/// twice: with the file as an ssh_config inventory, and with a plain list of the same names judged
/// under the file as the user's own configuration (`--ssh-config`). A case whose lines a
/// `KnownHostsCommand` prints is compared in the second run only; in the first, the inventory's
/// command is never run and the host is `unchecked` (or an alarm or refusal the rest proves).
///
/// A bounded sample (the ORACLE-FINDINGS rows plus a seeded draw, 60 cases) runs by default;
/// `FLEETTRUST_FULL_MATRIX=1` runs every case. `FLEETTRUST_MATRIX_SEED` and `FLEETTRUST_MATRIX_CASES`
/// change the draw.
final class ServerDifferentialTests: XCTestCase {
    /// A stricter answer fleettrust gives on purpose: a code fleettrust itself reports in
    /// `stricter_than_ssh` (README, "Where fleettrust is stricter than ssh"), and what must hold for
    /// the case to be that choice. fleettrust may be louder than ssh only when it says which
    /// documented choice made it so and the case really is one.
    struct StricterChoice: Sendable {
        var code: String
        var applies: @Sendable (ServerCase, SSHOracle.Handshake, String) -> Bool
    }

    static let stricterChoices: [StricterChoice] = [
        StricterChoice(code: "revoked-on-bare-name") { item, _, status in
            status == "revoked" && item.knownHosts == .revokedBare
        },
        StricterChoice(code: "user-certificate") { item, _, status in
            status == "invalid-certificate" && item.setup.certificate?.variant == .userRole
        },
        StricterChoice(code: "certificate-not-negotiated") { item, handshake, status in
            status == "invalid-certificate" && !(handshake.hostKeyAlgorithm ?? "").hasSuffix("-cert-v01@openssh.com")
        },
        StricterChoice(code: "unusable-key-changed") { item, handshake, status in
            status == "changed" && handshake.finding == .invalidKeyLength && item.knownHosts == .otherSameType
        },
        StricterChoice(code: "key-not-negotiated") { item, _, status in
            (status == "revoked" || status == "changed")
                && ([.revoked, .revokedBare, .otherSameType].contains(item.knownHosts) || item.config == .revokedHostKeysKRL)
        },
    ]

    /// fleettrust's host statuses by alarm level.
    static func level(ofStatus status: String) -> Int? {
        switch status {
        case "trusted": return 0
        case "new", "unreachable", "error", "unpinned", "unchecked": return 1
        case "changed", "revoked", "pin-mismatch", "invalid-certificate", "unverified": return 2
        default: return nil
        }
    }

    func testFleettrustIsNeverQuieterThanSSHAgainstOddServers() throws {
        let environment = ProcessInfo.processInfo.environment
        let full = environment["FLEETTRUST_FULL_MATRIX"] == "1"
        let seed = environment["FLEETTRUST_MATRIX_SEED"].flatMap(UInt64.init) ?? 20_261_123
        let count = environment["FLEETTRUST_MATRIX_CASES"].flatMap(Int.init) ?? 60
        let cases = ServerMatrix.cases(full: full, count: count, seed: seed)
        print("server differential: \(cases.count) cases (full matrix: \(ServerMatrix.fullCount)), seed \(seed)")
        try assertNeverQuieterThanSSH(cases, label: "server differential")
    }

    /// Real servers of the kinds real fleets run (Dropbear, tinysshd, OpenSSH as a FIPS host, with
    /// Diffie-Hellman or group exchange or sntrup761 only, SHA-1-only RSA, a key exchange only
    /// libssh negotiates), each with nothing recorded, every key it offers, another key, and a
    /// `@cert-authority` line where it has a certificate.
    func testFleettrustIsNeverQuieterThanSSHAgainstAZooOfRealServers() throws {
        let cases = ServerMatrix.zooCases()
        print("server zoo: \(cases.count) cases over \(Set(cases.map(\.setup.server)).count) server kinds")
        try assertNeverQuieterThanSSH(cases, label: "server zoo")
    }

    /// Starts the cases' servers, asks the real `ssh` and then `fleettrust scan` (twice: as an
    /// ssh_config inventory and under `--ssh-config`) about every case, and fails on any case
    /// where fleettrust is quieter than ssh, or louder without a documented stricter choice.
    private func assertNeverQuieterThanSSH(_ given: [ServerCase], label: String) throws {
        let started = Date()
        var cases = given
        let lab = try ServerLab()
        defer { lab.stop() }
        let servers = try startServers(for: &cases, lab: lab)
        defer { servers.stop() }
        let (inventory, shared) = try writeFiles(for: cases, lab: lab)
        print("\(label): servers up after \(Int(Date().timeIntervalSince(started))) s")

        // The oracle: real ssh on the same inventory (as its ssh_config), four at a time.
        let oracle = Mutex<[Int: SSHOracle.Handshake]>([:])
        let frozen = cases
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for item in frozen where item.index % 4 == worker {
                let handshake = (try? SSHOracle.handshake(host: item.name, config: inventory))
                    ?? SSHOracle.classifyHandshake("ssh did not run")
                oracle.withLock { $0[item.index] = handshake }
            }
        }
        let ssh = oracle.withLock { $0 }
        print("\(label): ssh done after \(Int(Date().timeIntervalSince(started))) s")

        // The system under test: one scan over every case, then the same names under --ssh-config.
        func scan(_ arguments: [String]) throws -> (run: ProgramRun, rows: [String: [String: Any]], exitStatus: Int?) {
            let run = try ProgramRun.run(BuiltProducts.fleettrust, ["scan", "--format", "json", "--known-hosts", shared, "--timeout", "10"]
                                            + arguments, limit: 900)
            let document = try XCTUnwrap(try? JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any],
                                         "fleettrust printed no JSON document (status \(run.status)): \(run.stderrText.prefix(2000))")
            let hosts = document["hosts"] as? [[String: Any]] ?? []
            let rows = Dictionary(hosts.compactMap { row in (row["name"] as? String).map { ($0, row) } }, uniquingKeysWith: { first, _ in first })
            let exitStatus = (document["summary"] as? [String: Any])?["exit_status"] as? Int
            print("\(label): fleettrust done after \(Int(Date().timeIntervalSince(started))) s (exit status \(exitStatus.map(String.init) ?? "?"), process \(run.status))")
            return (run, rows, exitStatus)
        }
        let (run, rows, exitStatus) = try scan(["--inventory", inventory, "--inventory-format", "ssh-config"])
        let names = lab.path("names")
        try cases.map { $0.name + "\n" }.joined().write(toFile: names, atomically: true, encoding: .utf8)
        let underUserConfiguration = try scan(["--inventory", names, "--inventory-format", "plain", "--ssh-config", inventory])

        var disagreements: [String] = []
        var classes: [String: (count: Int, example: String)] = [:]
        var tally: [String: Int] = [:]
        var maximum = (ssh: 0, fleettrust: 0)
        for (pass, passRows) in [("", rows), ("--ssh-config: ", underUserConfiguration.rows)] {
            for item in cases {
                let handshake = ssh[item.index]!
                let row = passRows[item.name]
                let status = row?["status"] as? String ?? "missing"
                let sshLevel = handshake.finding.alarmLevel
                let ourLevel = Self.level(ofStatus: status)
                let claimed = row?["stricter_than_ssh"] as? [String] ?? []
                if pass.isEmpty {
                    tally[handshake.finding.rawValue, default: 0] += 1
                    maximum.ssh = max(maximum.ssh, sshLevel)
                    maximum.fleettrust = max(maximum.fleettrust, ourLevel ?? 0)
                }
                var problem: String?
                if pass.isEmpty && item.config == .knownHostsCommand {
                    // Nothing is claimed under it; an alarm or a refusal from the rest still stands.
                if ["trusted", "new", "missing"].contains(status) { problem = "an inventory's KnownHostsCommand: \(status), not unchecked" }
                } else if handshake.finding == .other {
                    problem = "the oracle could not classify ssh's outcome"
                } else if let ourLevel {
                    if ourLevel < sshLevel {
                        problem = "QUIETER than ssh"
                    } else if ourLevel > sshLevel {
                        let allowed = Self.stricterChoices.filter { claimed.contains($0.code) && $0.applies(item, handshake, status) }
                        if allowed.isEmpty {
                            problem = "LOUDER than ssh, not a documented stricter choice (claimed: \(claimed))"
                        } else {
                            tally["stricter: " + allowed.map(\.code).joined(separator: "+"), default: 0] += 1
                        }
                    }
                } else {
                    problem = "unrecognised fleettrust status"
                }
                guard let problem = problem.map({ pass + $0 }) else { continue }
                let method = row?["method"] as? String ?? "-"
                let error = (row?["error"] as? [String: Any])?["message"] as? String
                let keys = (row?["keys"] as? [[String: Any]] ?? []).map { "\($0["type"] ?? "?")=\($0["verdict"] ?? "?")" }.joined(separator: " ")
                let text = """
                    \(problem): \(item)
                      ssh: \(handshake.finding.rawValue) (level \(sshLevel)), met \(handshake.hostKeyAlgorithm ?? "-"): \(handshake.finalMessage)\
                    \(handshake.certificateNotes.isEmpty ? "" : "\n  ssh certificate notes: " + handshake.certificateNotes.joined(separator: "; "))
                      fleettrust: \(status) (level \(ourLevel.map(String.init) ?? "?")), method \(method)\(error.map { ", error \($0)" } ?? ""), keys \(keys)
                    """
                disagreements.append(text)
                let key = "\(problem) | \(item.kind) | config=\(item.config.rawValue) | ssh=\(handshake.finding.rawValue) | fleettrust=\(status)"
                classes[key] = (count: (classes[key]?.count ?? 0) + 1, example: classes[key]?.example ?? text)
            }
        }
        print("\(label): ssh findings \(tally.sorted { $0.key < $1.key })")
        for text in disagreements { print("---\n" + text) }
        print("\(label): disagreement classes (count, then one reproduction):")
        for (key, value) in classes.sorted(by: { $0.key < $1.key }) { print("=== \(value.count) × \(key)\n\(value.example)") }
        print("\(label): \(disagreements.count) of \(cases.count) cases disagree, \(classes.count) classes; "
              + "loudest ssh level \(maximum.ssh), fleettrust level \(maximum.fleettrust); took \(Int(Date().timeIntervalSince(started))) s")
        if let exitStatus {
            XCTAssertEqual(exitStatus, maximum.fleettrust, "summary.exit_status is the loudest host status")
        }
        XCTAssertEqual(rows.count, cases.count, "fleettrust reports every case once: \(run.stderrText.prefix(1000))")
        XCTAssertEqual(underUserConfiguration.rows.count, cases.count, "\(underUserConfiguration.run.stderrText.prefix(1000))")
        XCTAssertTrue(disagreements.isEmpty, "\(disagreements.count) of \(cases.count) cases disagree with ssh, in \(classes.count) classes:\n"
                      + classes.sorted(by: { $0.key < $1.key }).map { "\($0.value.count) × \($0.key)" }.joined(separator: "\n"))
    }

    // MARK: - Set-up

    private final class Servers {
        var fake: [FakeKeyServer] = []
        let real: RealServerGroup
        init(directory: String) { real = RealServerGroup(directory: directory) }
        func stop() {
            for server in fake { server.stop() }
            real.stop()
        }
    }

    /// One FakeKeyServer per setup (listening on the addresses of all its cases) or real server
    /// processes; assigns each case its port.
    private func startServers(for cases: inout [ServerCase], lab: ServerLab) throws -> Servers {
        let servers = Servers(directory: lab.directory)
        var bySetup: [ServerCase.Setup: [Int]] = [:]
        var order: [ServerCase.Setup] = []
        for item in cases {
            if bySetup[item.setup] == nil { order.append(item.setup) }
            bySetup[item.setup, default: []].append(item.index)
        }
        var fakeJobs: [(setup: ServerCase.Setup, keys: [FakeHostKey], addresses: [String])] = []
        for (number, setup) in order.enumerated() {
            let members = bySetup[setup]!.map { cases[$0] }
            let names = members.map(\.address) + members.compactMap(\.alias)
            let certificateBlob = try setup.certificate.map { try lab.certificateBlob($0, tag: "s\(number)", names: names) }
            if setup.server != .fake {
                var certificatePath: String?
                if let certificateBlob {
                    certificatePath = lab.path("s\(number)-sshd-cert.pub")
                    try (KeyFiles.line(blob: certificateBlob) + "\n").write(toFile: certificatePath!, atomically: true, encoding: .utf8)
                }
                let ports = try servers.real.start(setup.server, hostKeys: setup.plain.map { lab.path(ServerLab.keyFile($0)) },
                                                   certificate: certificatePath, addresses: members.map(\.address), tag: "s\(number)")
                for member in members { cases[member.index].port = ports[member.address]! }
                continue
            }
            var keys: [FakeHostKey] = []
            if let certificate = setup.certificate, let certificateBlob {
                keys.append(FakeHostKey(privateKeyPath: lab.path(ServerLab.keyFile(certificate.key)), presentedBlob: certificateBlob,
                                        algorithms: ServerLab.certificateAlgorithms(certificate.key)))
            }
            for plain in setup.plain {
                var key = try FakeHostKey.plain(lab.path(ServerLab.keyFile(plain)), algorithms: ServerLab.algorithms(plain))
                if plain == .paddedRSA { key = FakeHostKey(privateKeyPath: key.privateKeyPath, presentedBlob: try OddKeys.zeroPaddedRSA(key.presentedBlob),
                                                           algorithms: key.algorithms) }
                keys.append(key)
            }
            fakeJobs.append((setup, keys, members.map(\.address)))
        }
        // Python takes a while to start; start eight at a time.
        let started = Mutex<[Int: Result<FakeKeyServer, Error>]>([:])
        let jobs = fakeJobs
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in jobs.indices where index % 8 == worker {
                let result = Result { try FakeKeyServer(keys: jobs[index].keys, addresses: jobs[index].addresses) }
                started.withLock { $0[index] = result }
            }
        }
        let results = started.withLock { $0 }
        for index in fakeJobs.indices {
            switch results[index]! {
            case .success(let server): servers.fake.append(server)
            case .failure(let error):
                servers.stop()
                throw error
            }
        }
        for (index, job) in fakeJobs.enumerated() {
            let port = servers.fake[index].port
            for member in bySetup[job.setup]! { cases[member].port = port }
        }
        return servers
    }

    /// Writes the inventory (also ssh's config) and the known_hosts files; returns their paths.
    private func writeFiles(for cases: [ServerCase], lab: ServerLab) throws -> (inventory: String, sharedKnownHosts: String) {
        var lines: [Int: [(line: String, hash: Bool)]] = [:]
        for item in cases { lines[item.index] = try lab.knownHostsLines(item) }
        let toHash = cases.flatMap { item in lines[item.index]!.filter(\.hash).map(\.line) }
        var hashed = try lab.hashed(toHash).makeIterator()
        let shared = lab.path("known_hosts")
        var sharedText = ""
        var inventory = ""
        for item in cases {
            let text = lines[item.index]!.map { $0.hash ? hashed.next()! : $0.line }.map { $0 + "\n" }.joined()
            inventory += "Host \(item.name)\n  HostName \(item.address)\n  Port \(item.port)\n"
            if let alias = item.alias { inventory += "  HostKeyAlias \(alias)\n" }
            if let algorithms = item.hostKeyAlgorithms { inventory += "  HostKeyAlgorithms \(algorithms)\n" }
            for setting in item.otherSettings { inventory += "  \(setting)\n" }
            if item.config == .revokedHostKeysKRL { inventory += "  RevokedHostKeys \(try lab.revocationList(item))\n" }
            if item.config == .userKnownHostsFile {
                let own = lab.path("known_hosts-\(item.name)")
                try text.write(toFile: own, atomically: true, encoding: .utf8)
                inventory += "  UserKnownHostsFile \(own)\n"
            } else if item.config == .knownHostsCommand {
                let printed = lab.path("printed-\(item.name)")
                try text.write(toFile: printed, atomically: true, encoding: .utf8)
                inventory += "  KnownHostsCommand /bin/cat \(printed)\n"
            } else {
                sharedText += text
            }
        }
        inventory += "Host *\n  UserKnownHostsFile \(shared)\n  GlobalKnownHostsFile /dev/null\n"
        try sharedText.write(toFile: shared, atomically: true, encoding: .utf8)
        let inventoryPath = lab.path("inventory.ssh_config")
        try inventory.write(toFile: inventoryPath, atomically: true, encoding: .utf8)
        return (inventoryPath, shared)
    }
}
