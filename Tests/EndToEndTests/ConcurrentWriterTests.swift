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

    /// Four processes recording into one history database at once, one transaction per probe:
    /// every row arrives, and the per-key counts agree with the rows.
    func testFourProcessesRecordingHistoryAtOnceLoseNoRow() throws {
        let path = scratch.file("history.sqlite")
        let runs = runWriters("history", file: path)
        for run in runs { XCTAssertEqual(run?.status, 0, run?.stderrText ?? "did not run") }
        let store = try XCTUnwrap(try HistoryStore.open(path: path, readOnly: true))
        XCTAssertEqual(try store.sightingCount(), Self.writers * Self.linesPerWriter)
        let hosts = (0..<4).map { "shared-\($0)" }
        let remembered = try store.history(for: hosts.map { InventoryHost(name: $0) })
        let counted = remembered.hosts.values.flatMap(\.keys).reduce(0) { $0 + $1.sightings }
        XCTAssertEqual(counted, Self.writers * Self.linesPerWriter, "every probe counted once per key")
        XCTAssertEqual(remembered.hosts[hosts[0]]?.keys.count, Self.writers * 3)
    }

    /// Also watches the file while it is written: every read sees a whole file (ending in a
    /// newline) and never fewer lines than the read before.
    func testFourProcessesSavingHundredLinesEachLoseNone() throws {
        try scratch.write("known_hosts", "# shared file\n")
        let path = scratch.file("known_hosts")
        let stop = WatcherStop()
        let watcher = WatchResult()
        let watching = Thread {
            var previous = 0
            while !stop.isSet {
                guard let data = FileManager.default.contents(atPath: path) else { watcher.fail("file missing"); continue }
                let count = data.filter { $0 == 0x0a }.count
                if data.last != 0x0a { watcher.fail("partial file") }
                if count < previous { watcher.fail("line count fell from \(previous) to \(count)") }
                previous = count
                watcher.reads += 1
            }
            stop.acknowledge()
        }
        watching.start()
        let runs = runWriters("lines", file: path)
        stop.set()
        stop.waitForAcknowledgement()
        for run in runs {
            XCTAssertEqual(run?.status, 0, run?.stderrText ?? "did not run")
        }
        XCTAssertEqual(watcher.failures, [])
        XCTAssertGreaterThan(watcher.reads, 10)
        for name in ["w0-0", "w3-99"] {
            XCTAssertEqual(try Tool.run("/usr/bin/ssh-keygen", ["-F", name, "-f", path]).status, 0, name)
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
        let pins = try PinSet.read(path: scratch.file("pins"))
        XCTAssertEqual(pins.lines.map(\.patterns.text).sorted(), expectedWriterNames().map { $0 + ".example" }.sorted())
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

    /// A writer that opened known_hosts for appending before `tidy --fix` replaced it, and
    /// writes only a second and a half later (far past a lease's short wait): its line is carried
    /// into the new file, and the fix is made too.
    func testALateAppendToTheReplacedFileIsCarriedOver() throws {
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICa+KH5Vx9v59VXPMsxNGf4dP8Zd8JjLkSjMzPVMUHCW"
        try scratch.write("known_hosts", "web1 \(key)\nweb1 \(key)\n")
        let knownHosts = scratch.file("known_hosts"), ready = scratch.file("ready")
        let late = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH6t3Xx4oL4VRJhh4Mmg/35/wjy85lnYtYs/TjdOvnBG"
        let writer = try SpawnedProcess("/bin/sh", ["-c", "exec 3>>\"$1\"; : > \"$2\"; sleep 1.5; echo \"late-writer $3\" >&3",
                                                    "sh", knownHosts, ready, late])
        defer { writer.terminate() }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: ready), Date() < deadline { usleep(10_000) }
        let tidy = try ProgramRun.run(BuiltProducts.fleettrust, ["tidy", "--known-hosts", knownHosts, "--fix", "--kind", "duplicate",
                                                                 "--yes", "--no-history", "--audit-log", scratch.file("audit.jsonl")],
                                      limit: 60)
        XCTAssertEqual(tidy.status, 0, tidy.stderrText)
        while writer.isRunning, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(writer.exitStatus, 0)
        XCTAssertEqual(scratch.text("known_hosts"), "web1 \(key)\nlate-writer \(late)\n")
        let found = try Tool.run("/usr/bin/ssh-keygen", ["-F", "late-writer", "-f", knownHosts])
        XCTAssertEqual(found.status, 0, "ssh-keygen finds the late writer's host: \(found.stdout)")
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

/// What the watcher thread saw.
final class WatchResult: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String] = []
    private var count = 0

    func fail(_ message: String) {
        lock.lock()
        if seen.count < 10 { seen.append(message) }
        lock.unlock()
    }

    var failures: [String] { lock.lock(); defer { lock.unlock() }; return seen }

    var reads: Int {
        get { lock.lock(); defer { lock.unlock() }; return count }
        set { lock.lock(); count = newValue; lock.unlock() }
    }
}

/// A stop request and its acknowledgement between the test and the watcher thread.
final class WatcherStop: @unchecked Sendable {
    private let condition = NSCondition()
    private var requested = false, acknowledged = false

    var isSet: Bool { condition.lock(); defer { condition.unlock() }; return requested }

    func set() { condition.lock(); requested = true; condition.unlock() }

    func acknowledge() {
        condition.lock()
        acknowledged = true
        condition.broadcast()
        condition.unlock()
    }

    func waitForAcknowledgement() {
        condition.lock()
        while !acknowledged { condition.wait() }
        condition.unlock()
    }
}
