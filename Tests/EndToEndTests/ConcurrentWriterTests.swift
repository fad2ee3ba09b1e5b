import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
import FleetTrustCore
import FleetTrustTestFleet

/// Several fleettrust processes and the real `ssh` writing one file at once: no line is lost.
final class ConcurrentWriterTests: XCTestCase {
    var scratch: StoreFaultScratch!
    static let writers = 4, linesPerWriter = 100

    override func setUpWithError() throws { scratch = try StoreFaultScratch() }
    override func tearDown() { scratch.remove() }

    /// Starts `store-stress` `writers` times at once and waits for all of them.
    func runWriters(_ mode: String, file: String) -> [ProgramRun?] {
        let runs = ResultBox(count: Self.writers)
        DispatchQueue.concurrentPerform(iterations: Self.writers) { i in
            runs.set(i, try? ProgramRun.run(BuiltProducts.directory + "/store-stress",
                                            [mode, file, "w\(i)", String(Self.linesPerWriter)], limit: 300))
        }
        return runs.values
    }

    func expectedWriterNames() -> [String] {
        (0..<Self.writers).flatMap { w in (0..<Self.linesPerWriter).map { "w\(w)-\($0)" } }
    }

    func testFourProcessesSavingHundredLinesEachLoseNone() throws {
        try scratch.write("known_hosts", "# shared file\n")
        for run in runWriters("lines", file: scratch.file("known_hosts")) {
            XCTAssertEqual(run?.status, 0, run?.stderrText ?? "did not run")
        }
        let lines = scratch.text("known_hosts").split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "# shared file")
        XCTAssertEqual(lines.dropFirst().map { String($0.split(separator: " ")[0]) }.sorted(), expectedWriterNames().sorted())
        XCTAssertEqual(scratch.entries(), ["known_hosts"])
    }

    func testFourProcessesPinningHundredHostsEachLoseNone() throws {
        for run in runWriters("pins", file: scratch.file("pins")) {
            XCTAssertEqual(run?.status, 0, run?.stderrText ?? "did not run")
        }
        let file = try PinFile.load(path: scratch.file("pins"))
        XCTAssertEqual(file.errors, [])
        XCTAssertEqual(file.pins.map(\.patterns).sorted(), expectedWriterNames().map { $0 + ".example" }.sorted())
    }

    /// `ssh -o StrictHostKeyChecking=accept-new` appends each new host without any lock,
    /// while four writers keep replacing the file; every line of both must survive, and the
    /// real `ssh` must then trust every host it recorded.
    func testRealSshAppendingWhileWeWriteLosesNothing() throws {
        let fleet = try TestFleet.start(hosts: 1)
        defer { fleet.stop() }
        let host = fleet.hosts[0]
        let knownHosts = scratch.file("known_hosts")
        try scratch.write("known_hosts", "# shared file\n")
        let aliasesPerClient = 25, clients = 2
        let sshRuns = ResultBox(count: clients * aliasesPerClient)
        let group = DispatchGroup()
        for client in 0..<clients {
            DispatchQueue.global().async(group: group) {
                for i in 0..<aliasesPerClient {
                    let alias = "alias-\(client)-\(i)"
                    sshRuns.set(client * aliasesPerClient + i, try? ProgramRun.run("/usr/bin/ssh", [
                        "-F", "/dev/null", "-o", "StrictHostKeyChecking=accept-new", "-o", "BatchMode=yes",
                        "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null",
                        "-o", "HostKeyAlias=\(alias)", "-o", "HostKeyAlgorithms=ssh-ed25519",
                        "-o", "UpdateHostKeys=no", "-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no",
                        "-o", "KbdInteractiveAuthentication=no", "-o", "ConnectTimeout=10",
                        "-p", String(host.port), "nobody@\(host.address)", "true"], limit: 60))
                }
            }
        }
        let writers = runWriters("lines", file: knownHosts)
        group.wait()
        for run in writers { XCTAssertEqual(run?.status, 0, run?.stderrText ?? "did not run") }
        for (i, run) in sshRuns.values.enumerated() {
            XCTAssertTrue(run?.stderrText.contains("Permanently added") ?? false, "ssh \(i): \(run?.stderrText ?? "did not run")")
        }
        let names = scratch.text("known_hosts").split(separator: "\n").dropFirst().map { String($0.split(separator: " ")[0]) }
        let aliases = (0..<clients).flatMap { c in (0..<aliasesPerClient).map { "alias-\(c)-\($0)" } }
        XCTAssertEqual(names.sorted(), (expectedWriterNames() + aliases).sorted())
        XCTAssertEqual(scratch.entries(), ["known_hosts"])
        for alias in [aliases.first!, aliases.last!] {
            let outcome = try SSHOracle.check(name: host.address, port: host.port, knownHosts: knownHosts,
                                              extraOptions: ["-o", "HostKeyAlias=\(alias)"])
            XCTAssertEqual(outcome.verdict, .trusted, outcome.transcript.suffix(300).description)
        }
    }
}

/// Results filled in by concurrent workers.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [ProgramRun?]

    init(count: Int) { storage = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ value: ProgramRun?) {
        lock.lock()
        storage[index] = value
        lock.unlock()
    }

    var values: [ProgramRun?] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
