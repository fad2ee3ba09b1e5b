import FleetTrustTestFleet
import Foundation
import XCTest

/// `fleettrust --version` names the build and the libraries it runs on, for bug reports.
final class VersionTests: XCTestCase {
    func testVersionNamesTheBuildAndTheLibsshAndOpenSSLThisMachineLoads() throws {
        let run = try ProgramRun.run(BuiltProducts.fleettrust, ["--version"])
        XCTAssertEqual(run.status, 0, run.stderrText)
        let lines = run.stdoutText.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, run.stdoutText)
        XCTAssertTrue(lines.first?.hasPrefix("fleettrust ") ?? false, run.stdoutText)
        XCTAssertFalse(lines.first?.dropFirst("fleettrust ".count).isEmpty ?? true, run.stdoutText)

        let libssh = try ProgramRun.run("/usr/bin/pkg-config", ["--modversion", "libssh"]).stdoutText
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(lines.count > 1 && lines[1].hasPrefix("libssh \(libssh)/"), "\(lines) against libssh \(libssh)")
        // `openssl version` prints the library it loaded after "Library: ".
        let openssl = try ProgramRun.run("/usr/bin/openssl", ["version"]).stdoutText
        let library = openssl.components(separatedBy: "(Library: ").last?.components(separatedBy: ")").first ?? openssl
        XCTAssertEqual(lines.count > 2 ? lines[2] : "", library, openssl)
    }
}
