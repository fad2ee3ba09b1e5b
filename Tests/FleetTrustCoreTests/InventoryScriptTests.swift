import XCTest
@testable import FleetTrustCore

/// Dynamic inventory scripts, run for real: `--list`, the `--host` fallback, and every bound.
final class InventoryScriptTests: XCTestCase {
    private var trees: [InventoryTree] = []
    /// Files where scripts write the PIDs they start, so the test can prove them gone and stop
    /// any survivor by PID.
    private var pidFiles: [String] = []

    override func tearDown() {
        for pid in pidFiles.flatMap(Self.pids) where Self.isRunning(pid) { kill(pid, SIGKILL) }
        pidFiles.forEach { unlink($0) }
        trees.forEach { $0.remove() }
    }

    private func tree(_ files: [String: String] = [:], executables: [String: String] = [:]) throws -> InventoryTree {
        let made = try InventoryTree(files, executables: executables)
        trees.append(made)
        return made
    }

    private static func pids(in file: String) -> [pid_t] {
        (try? String(contentsOfFile: file, encoding: .utf8))?.split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) } ?? []
    }

    /// Alive and not a zombie (an orphan's zombie may wait for a reaper this container lacks).
    private static func isRunning(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }

    private static let listing = #"{"web": {"hosts": ["w1", "w2"]}, "_meta": {"hostvars": {"w1": {"ansible_host": "127.0.0.21", "ansible_port": 2201}}}}"#

    func testListOutputIsReadAndGroupVarsBesideTheScriptApply() throws {
        let made = try tree(["group_vars/web.yml": "ansible_user: deploy\n"],
                            executables: ["inventory.sh": "#!/bin/sh\n[ \"$1\" = --list ] || exit 9\necho '\(Self.listing)'\n"])
        let inventory = try made.load("inventory.sh")
        XCTAssertEqual(inventory.errors, [])
        XCTAssertEqual(inventory.endpoints, ["w1": "deploy@127.0.0.21:2201", "w2": "deploy@w2:22"])
        XCTAssertEqual(inventory["w1"]?.source?.file, made.path("inventory.sh") + " --list")
    }

    func testWithoutMetaEachHostIsAskedWithDashDashHost() throws {
        let calls = NSTemporaryDirectory() + "ft-calls-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(calls) }
        let script = """
        #!/bin/sh
        echo "$*" >> \(calls)
        case "$1" in
        --list) echo '{"web": ["w1", "w2"]}' ;;
        --host) [ "$2" = w1 ] && echo '{"ansible_port": 2201}' ;;
        esac
        exit 0
        """
        let made = try tree(executables: ["inv": script])
        let inventory = try made.load("inv")
        XCTAssertEqual(inventory.endpoints, ["w1": "w1:2201", "w2": "w2:22"], "empty --host output means no variables")
        let asked = (try String(contentsOfFile: calls, encoding: .utf8)).split(separator: "\n").sorted()
        XCTAssertEqual(asked, ["--host w1", "--host w2", "--list"])
    }

    func testANonZeroExitNamesTheScriptAndShowsItsErrorOutput() throws {
        let made = try tree(executables: ["cmdb.py": "#!/bin/sh\necho 'Traceback (most recent call last):' >&2\necho 'cmdb.example: connection refused' >&2\nexit 3\n"])
        let error = try XCTUnwrap(made.loadError("cmdb.py"))
        XCTAssertEqual(error.description, "inventory script \(made.path("cmdb.py")) --list failed with exit status 3; it wrote on standard error: "
                       + "Traceback (most recent call last): / cmdb.example: connection refused")
    }

    func testAScriptThatRunsTooLongIsStoppedWithItsChildren() throws {
        let pidFile = NSTemporaryDirectory() + "ft-pids-\(UInt32.random(in: 0...UInt32.max))"
        pidFiles.append(pidFile)
        let made = try tree(executables: ["slow": "#!/bin/sh\nsleep 300 &\necho $$ $! > \(pidFile)\nwait\n"])
        let started = Date()
        let error = made.loadError("slow", limits: InventoryScript.Limits(seconds: 1))
        XCTAssertEqual(error, .scriptTimedOut(path: made.path("slow"), arguments: ["--list"], seconds: 1))
        XCTAssertEqual(error?.description, "inventory script \(made.path("slow")) --list did not finish within 1 second and was stopped")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        let pids = Self.pids(in: pidFile)
        XCTAssertEqual(pids.count, 2)
        let deadline = Date().addingTimeInterval(5)
        while pids.contains(where: Self.isRunning) && Date() < deadline { usleep(50_000) }
        XCTAssertFalse(pids.contains(where: Self.isRunning), "the script and the sleep it started are both stopped")
    }

    func testTooMuchOutputStopsTheScript() throws {
        let made = try tree(executables: ["chatty": "#!/bin/sh\nexec yes '{\"web\": [\"w1\"]}'\n"])
        let error = made.loadError("chatty", limits: InventoryScript.Limits(seconds: 30, outputBytes: 100_000))
        XCTAssertEqual(error, .scriptOutputTooLarge(path: made.path("chatty"), arguments: ["--list"], limit: 100_000))
    }

    func testAFloodOnStandardErrorDoesNotBlockTheScript() throws {
        let made = try tree(executables: ["noisy": "#!/bin/sh\nhead -c 2000000 /dev/zero | tr '\\0' x >&2\necho '{\"web\": [\"w1\"]}'\n"])
        XCTAssertEqual(try made.load("noisy").hosts.map(\.name), ["w1"])
    }

    func testOutputThatIsNotJSONIsOneSentence() throws {
        let made = try tree(executables: ["wrong": "#!/bin/sh\necho '[web]'\necho w1\n", "silent": "#!/bin/sh\n"])
        XCTAssertEqual(made.loadError("wrong")?.description, "inventory script \(made.path("wrong")) --list printed no JSON object (its output begins '[web]?w1')")
        XCTAssertEqual(made.loadError("silent")?.description, "inventory script \(made.path("silent")) --list printed no JSON object (its output is empty)")
    }

    func testAScriptThatCannotStartSaysWhy() throws {
        let made = try tree(executables: ["old.py": "#!/usr/bin/nonexistent-python2\nprint('{}')\n"])
        let error = try XCTUnwrap(made.loadError("old.py"))
        guard case .scriptNotStarted(let path, let reason) = error else { return XCTFail("\(error)") }
        XCTAssertEqual(path, made.path("old.py"))
        XCTAssertFalse(reason.isEmpty)
    }

    func testAnExecutableTextInventoryIsReadAsAFileAsAnsibleFallsBackToDoing() throws {
        let made = try tree(executables: ["hosts": "[web]\nw1 ansible_port=2201\n"])
        XCTAssertEqual(try made.load("hosts").endpoints, ["w1": "w1:2201"])
    }

    func testAScriptWithoutTheExecuteBitIsNamedNotParsed() throws {
        let made = try tree(["inv.py": "#!/usr/bin/env python3\nprint('{}')\n", "hosts": "w0\n"])
        XCTAssertEqual(made.loadError("inv.py"), .scriptNotExecutable(path: made.path("inv.py")))
        let inventory = try made.load()
        XCTAssertEqual(inventory.hosts.map(\.name), ["w0"])
        XCTAssertEqual(inventory.errors.map(\.location.file), [made.path("inv.py")])
    }

    func testScriptsAndFilesOfADirectoryShareGroupsAndAFailingScriptEndsTheLoad() throws {
        let made = try tree(["static.ini": "[web:vars]\nansible_user=webuser\n[prod:children]\nweb\n",
                             "group_vars/prod.yml": "ansible_port: 2022\n"],
                            executables: ["cloud.sh": "#!/bin/sh\necho '\(Self.listing)'\n"])
        XCTAssertEqual(try made.load().endpoints, ["w1": "webuser@127.0.0.21:2201", "w2": "webuser@w2:2022"])
        try made.write("zz-broken.sh", "#!/bin/sh\nexit 1\n", executable: true)
        XCTAssertEqual(made.loadError(), .scriptFailed(path: made.path("zz-broken.sh"), arguments: ["--list"], status: 1, errorOutput: ""))
    }

    func testWaitingForAScriptFromAnAsyncContextDoesNotDeadlock() async throws {
        let made = try tree(executables: ["slow": "#!/bin/sh\nexec sleep 30\n", "fast": "#!/bin/sh\necho '{\"g\": [\"a\"]}'\n"])
        let errors = await withTaskGroup(of: InventoryLoadError?.self) { group in
            for _ in 0..<4 { group.addTask { made.loadError("slow", limits: InventoryScript.Limits(seconds: 0.5)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(errors.count, 4)
        XCTAssertTrue(errors.allSatisfy { if case .scriptTimedOut = $0 { true } else { false } }, "\(errors)")
        XCTAssertEqual(try made.load("fast").hosts.map(\.name), ["a"])
    }
}
