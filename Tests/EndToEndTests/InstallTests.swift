import FleetTrustTestFleet
import Foundation
import XCTest

/// What `make install` installs, and `make uninstall`, into a scratch DESTDIR. SwiftPM holds the
/// build directory while tests run, so the test installs with `make install-files` (the copying half
/// of `install`) the debug build the tests run on and the man page `make test` generated first.
final class InstallTests: XCTestCase {
    private var destination = ""
    private var terminal: DashboardTmux?
    private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    override func setUpWithError() throws {
        destination = NSTemporaryDirectory() + "fleettrust-install-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
    }

    override func tearDown() {
        terminal?.stop()
        try? FileManager.default.removeItem(atPath: destination)
    }

    private func make(_ target: String) throws -> ProgramRun {
        let configuration = URL(fileURLWithPath: BuiltProducts.directory).lastPathComponent
        return try ProgramRun.run("/usr/bin/make", ["-C", packageRoot, target, "DESTDIR=\(destination)", "INSTALL_CONFIG=\(configuration)"],
                                  limit: 120)
    }

    /// Files (and links) under the destination, relative to it.
    private func installedFiles() -> Set<String> {
        let enumerator = FileManager.default.enumerator(atPath: destination)
        var files = Set<String>()
        while let path = enumerator?.nextObject() as? String {
            let type = (try? FileManager.default.attributesOfItem(atPath: destination + "/" + path))?[.type] as? FileAttributeType
            if type != .typeDirectory { files.insert(path) }
        }
        return files
    }

    func testMakeInstallPutsBinaryThemesManPageAndCompletionsUnderThePrefixAndUninstallRemovesExactlyThem() throws {
        let manual = packageRoot + "/.build/fleettrust.1"
        guard FileManager.default.fileExists(atPath: manual) else {
            throw XCTSkip("no man page at \(manual): `make test` generates it before running the tests")
        }
        let install = try make("install-files")
        XCTAssertEqual(install.status, 0, install.stdoutText + install.stderrText)
        let themes = try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/themes").filter { $0.hasSuffix(".theme") }
        let guide = try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/docs")
            .filter { $0.hasSuffix(".md") && $0 != "DESIGN.md" }
        XCTAssertTrue(guide.contains("trust-rules.md") && guide.contains("inventories.md"), "\(guide)")
        XCTAssertEqual(installedFiles(), Set(["usr/local/bin/fleettrust", "usr/local/share/man/man1/fleettrust.1",
                                              "usr/local/share/bash-completion/completions/fleettrust",
                                              "usr/local/share/zsh/site-functions/_fleettrust",
                                              "usr/local/share/fish/vendor_completions.d/fleettrust.fish"]
                                                 + themes.map { "usr/local/share/fleettrust/themes/" + $0 }
                                                 + guide.map { "usr/local/share/doc/fleettrust/" + $0 }
                                                 + ["usr/local/share/doc/fleettrust/copyright"]))
        let prefix = destination + "/usr/local"
        let notices = try String(contentsOfFile: prefix + "/share/doc/fleettrust/copyright", encoding: .utf8)
        try ThirdPartyNotices.assertCoversEverythingLinked(notices, packageRoot: packageRoot, "the installed copyright")

        let version = try ProgramRun.run(prefix + "/bin/fleettrust", ["--version"])
        XCTAssertEqual(version.status, 0, version.stderrText)
        let lines = version.stdoutText.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, version.stdoutText)
        XCTAssertTrue(lines[0].hasPrefix("fleettrust ") && lines[0].count > "fleettrust ".count, version.stdoutText)
        XCTAssertTrue(lines[1].hasPrefix("libssh 0."), version.stdoutText)
        XCTAssertTrue(lines[2].hasPrefix("OpenSSL 3."), version.stdoutText)

        let page = try ProgramRun.run("/usr/bin/man", ["-l", prefix + "/share/man/man1/fleettrust.1"],
                                        environment: ["PATH": "/usr/bin:/bin", "MANPAGER": "cat", "MANWIDTH": "100", "LANG": "C.UTF-8"])
        XCTAssertEqual(page.status, 0, page.stderrText)
        for expected in ["fleettrust", "SYNOPSIS", "--inventory", "scan", "--known-hosts", "EXIT STATUS", "pin-mismatch",
                         "FILE FORMATS", "Pin file", "Policy file", "tls://host:port", "DASHBOARD KEYS", "FILES",
                         "audit.jsonl", "EXAMPLES", "SEE ALSO"] {
            XCTAssertTrue(page.stdoutText.contains(expected), "the man page lacks \(expected): \(page.stdoutText.prefix(2000))")
        }
        for stale in ["0 on success", "README"] {
            XCTAssertFalse(page.stdoutText.contains(stale), "the man page still says \(stale)")
        }
        for completion in ["bash-completion/completions/fleettrust", "zsh/site-functions/_fleettrust", "fish/vendor_completions.d/fleettrust.fish"] {
            let script = try String(contentsOfFile: prefix + "/share/" + completion, encoding: .utf8)
            XCTAssertTrue(script.contains("--inventory") && script.contains("scan"), completion)
        }
        try assertTheInstalledBinaryFindsItsThemes(prefix: prefix)

        let uninstall = try make("uninstall")
        XCTAssertEqual(uninstall.status, 0, uninstall.stdoutText + uninstall.stderrText)
        XCTAssertEqual(installedFiles(), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: prefix + "/share/fleettrust"))
    }

    /// Far from the source tree's `themes/`, the installed dashboard opens with an installed theme,
    /// and names the installed directory first when a theme is missing.
    private func assertTheInstalledBinaryFindsItsThemes(prefix: String) throws {
        let inventory = destination + ".hosts"
        try "127.0.0.1:1\n".write(toFile: inventory, atomically: true, encoding: .utf8)
        defer { unlink(inventory) }
        let missing = try DashboardTmux(arguments: ["--inventory", inventory, "--theme", "no-such-theme"], executable: prefix + "/bin/fleettrust")
        terminal = missing
        let (refused, error) = missing.waitFor { $0.contains(DashboardTmux.exitMarker) }
        XCTAssertTrue(refused, error)
        let unwrapped = error.replacingOccurrences(of: "\n", with: "")
        XCTAssertTrue(unwrapped.contains("looked for \(prefix)/share/fleettrust/themes/no-such-theme.theme"), error)
        missing.stop()

        let themed = try DashboardTmux(arguments: ["--inventory", inventory, "--known-hosts", inventory + ".known_hosts", "--read-only",
                                                   "--theme", "high-contrast"], executable: prefix + "/bin/fleettrust")
        terminal = themed
        let (opened, screen) = themed.waitFor { $0.contains("1 unreachable") }
        XCTAssertTrue(opened, screen)
        themed.send("q")
        let (ended, after) = themed.waitFor { $0.contains("\(DashboardTmux.exitMarker)0") }
        XCTAssertTrue(ended, after)
        themed.stop()
    }
}
