import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// `fleettrust discover` against the real `ssh-keyscan` on the same target files (one port for
/// every host, as `ssh-keyscan -p` needs), with the real `ssh` finding what `-H` writes.
final class DiscoverKeyscanParityTests: XCTestCase {
    private static let fleet = Result { () throws -> TestFleet in
        var options = TestFleet.Options(hosts: 3)
        options.samePort = true
        options.rsaBits = 2048
        return try TestFleet(options)
    }

    override class func tearDown() {
        if case .success(let fleet) = fleet { fleet.stop() }
        super.tearDown()
    }

    private func discover(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run(BuiltProducts.fleettrust, ["discover"] + arguments, limit: 60)
    }

    private func keyscan(_ arguments: [String]) throws -> ToolOutput {
        try Tool.run("/usr/bin/ssh-keyscan", arguments)
    }

    private func sortedLines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }.sorted()
    }

    /// A target file in ssh-keyscan's format: a bare address, an address with names (mixed
    /// case, lowercased on output), two addresses printed under both, comments and blank lines.
    private func targetFile(_ fleet: TestFleet) throws -> String {
        let hosts = fleet.hosts
        let path = fleet.directory + "/keyscan-targets"
        try """
            # fleet targets
            \(hosts[0].address)
            \(hosts[1].address) Web1.Example,alias-one   # names replace the address in the output

            \(hosts[2].address),db.example
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testKnownHostsLinesEqualSshKeyscanForTheSameTargetFile() throws {
        let fleet = try Self.fleet.get()
        let file = try targetFile(fleet)
        let port = String(fleet.hosts[0].port)
        for types in [nil, "ed25519", "ecdsa,rsa", "ssh-rsa"] {
            let typeArguments = types.map { ["-t", $0] } ?? []
            let ours = try discover(["-p", port, "-f", file, "--format", "known-hosts"] + typeArguments)
            XCTAssertEqual(ours.status, 0, ours.stderrText)
            let theirs = try keyscan(["-p", port, "-f", file] + typeArguments)
            XCTAssertEqual(theirs.status, 0, theirs.stderr)
            XCTAssertFalse(sortedLines(theirs.stdout).isEmpty)
            XCTAssertEqual(sortedLines(ours.stdoutText), sortedLines(theirs.stdout), "-t \(types ?? "(all)")")
        }
        let lines = sortedLines(try discover(["-p", port, "-f", file, "--format", "known-hosts"]).stdoutText)
        XCTAssertTrue(lines.contains { $0.hasPrefix("[web1.example]:\(port) ssh-ed25519 ") }, lines.joined(separator: "\n"))
        XCTAssertFalse(lines.contains { $0.hasPrefix("[\(fleet.hosts[1].address)]:") }, "names replace the address")
        XCTAssertTrue(lines.contains { $0.hasPrefix("[db.example]:\(port) ") })
        XCTAssertFalse(lines.contains { $0.contains("-cert-v01@openssh.com") }, "certificates have no known_hosts line")
    }

    func testTargetsFromStandardInputReadLikeAFile() throws {
        let fleet = try Self.fleet.get()
        let file = try targetFile(fleet)
        let port = String(fleet.hosts[0].port)
        let input = try String(contentsOfFile: file, encoding: .utf8)
        let piped = try Tool.run(BuiltProducts.fleettrust, ["discover", "-p", port, "-f", "-", "--format", "known-hosts"], input: input)
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual(sortedLines(piped.stdout), sortedLines(try discover(["-p", port, "-f", file, "--format", "known-hosts"]).stdoutText))
    }

    func testHashedLinesAreWhatSshKeyscanWritesAndRealSshFindsThem() throws {
        let fleet = try Self.fleet.get()
        let host = fleet.hosts[1]
        let targets = fleet.directory + "/hashed-targets"
        try "\(host.address) Web1.Example,\(host.address)\n".write(toFile: targets, atomically: true, encoding: .utf8)
        let shape = try NSRegularExpression(pattern: #"^\|1\|[A-Za-z0-9+/]{27}=\|[A-Za-z0-9+/]{27}= [a-z0-9-]+ [A-Za-z0-9+/=]+$"#)
        for arguments in [["-H"], ["--format", "known-hosts", "--hash-known-hosts", "yes"]] {
            let ours = try discover(["-p", String(host.port), "-f", targets] + arguments)
            XCTAssertEqual(ours.status, 0, ours.stderrText)
            let theirs = try keyscan(["-H", "-p", String(host.port), "-f", targets])
            let mine = sortedLines(ours.stdoutText)
            XCTAssertEqual(mine.count, sortedLines(theirs.stdout).count, "one line per name and key, as ssh-keyscan -H")
            for line in mine {
                XCTAssertEqual(shape.numberOfMatches(in: line, range: NSRange(line.startIndex..., in: line)), 1, line)
            }
            XCTAssertEqual(Set(mine.map { $0.split(separator: " ").dropFirst().joined(separator: " ") }),
                           Set(sortedLines(theirs.stdout).map { $0.split(separator: " ").dropFirst().joined(separator: " ") }),
                           "the same keys")
            let file = fleet.directory + "/hashed_known_hosts"
            try ours.stdoutText.write(toFile: file, atomically: true, encoding: .utf8)
            let byAddress = try SSHOracle.check(name: host.address, port: host.port, knownHosts: file)
            XCTAssertEqual(byAddress.verdict, .trusted, byAddress.transcript)
            let byName = try SSHOracle.check(name: "web1.example", port: host.port, knownHosts: file, connectTo: host.address)
            XCTAssertEqual(byName.verdict, .trusted, byName.transcript)
            XCTAssertFalse(ours.stdoutText.lowercased().contains("web1.example"), "no name in clear")
        }
    }

    func testBadLinesAreReportedByLineAndTheOthersStillScanned() throws {
        let fleet = try Self.fleet.get()
        let host = fleet.hosts[0]
        let closed = try Loopback.freePort()
        let targets = fleet.directory + "/bad-targets"
        try """
            \(host.address):\(host.port)
            192.0.2.0/24
            \(host.address):99999
            127.0.0.1:\(closed),\(host.address):\(host.port) fallback.example
            """.write(toFile: targets, atomically: true, encoding: .utf8)
        let run = try discover(["-f", targets, "--format", "known-hosts", "-t", "ed25519"])
        XCTAssertEqual(run.status, 1, "lines left out make the exit status 1")
        XCTAssertTrue(run.stderrText.contains("\(targets):2: \"192.0.2.0/24\": address ranges (CIDR) are not supported"), run.stderrText)
        XCTAssertTrue(run.stderrText.contains("\(targets):3: bad target"), run.stderrText)
        let lines = sortedLines(run.stdoutText)
        XCTAssertEqual(lines.count, 2, run.stdoutText)
        XCTAssertTrue(lines.contains { $0.hasPrefix("[\(host.address)]:\(host.port) ssh-ed25519 ") })
        XCTAssertTrue(lines.contains { $0.hasPrefix("[fallback.example]:\(host.port) ssh-ed25519 ") },
                      "a refused first address moves on to the next one")
    }

    func testUnknownKeyTypeAndHashWithTextAreUsageErrors() throws {
        let fleet = try Self.fleet.get()
        let target = fleet.hosts[0].endpoints[0].label
        XCTAssertEqual(try discover(["-t", "ed448", target]).status, 64)
        XCTAssertEqual(try discover(["-H", "--format", "text", target]).status, 64)
        XCTAssertEqual(try discover(["--hash-known-hosts", "maybe", target]).status, 64)
        XCTAssertEqual(try discover(["-f", fleet.directory + "/no-such-file"]).status, 64)
        let dsa = try discover(["-t", "dsa,ed25519", "--format", "known-hosts", target])
        XCTAssertEqual(dsa.status, 0)
        XCTAssertTrue(dsa.stderrText.contains("cannot verify dsa host keys"), dsa.stderrText)
        XCTAssertEqual(sortedLines(dsa.stdoutText).count, 1)
    }
}
