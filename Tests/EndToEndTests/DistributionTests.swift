import FleetTrustCore
import FleetTrustTestFleet
import Foundation
import XCTest

/// The release for jump hosts without Swift, as `make dist` wrote it: both packages carry the
/// licence notices of what the binary links; the tarball's binary runs with the toolchain hidden
/// (version, a scan of the test fleet, the dashboard with an installed theme), and the .deb installs with `apt-get` into a fresh Debian 12 root, where `--version`,
/// `man -w` and a scan of the fleet on 127.0.0.1 work and `apt-get remove` takes it away again.
/// The statuses are those the real `ssh` gives the fleet (ScanCommandTests proves them for the
/// tested build); each scan here must give the same.
final class DistributionTests: XCTestCase {
    private var fleet: TestFleet?
    private var terminal: DashboardTmux?
    private var root: DebianRoot?
    private var scratch = ""
    private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    private let fleetStatuses: [HostStatus] = [.trusted, .trusted, .new, .changed, .revoked]

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "ft-dist-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        terminal?.stop()
        fleet?.stop()
        if root?.remove() != false { try? FileManager.default.removeItem(atPath: scratch) }
    }

    private func run(_ program: String, _ arguments: [String], limit: Double = 120) throws -> ProgramRun {
        try ProgramRun.run(program, arguments, limit: limit)
    }

    /// The first line of `--version` of the build the other tests ran: the release must say the same.
    private func testedVersion() throws -> String {
        String(try run(BuiltProducts.fleettrust, ["--version"]).stdoutText.split(separator: "\n").first ?? "")
    }

    private func statuses(_ scan: ProgramRun, file: StaticString = #filePath, line: UInt = #line) -> [HostStatus] {
        do {
            return try RecordedScan.decode(Data(scan.stdout)).hosts.map(\.status)
        } catch {
            XCTFail("not a scan document (status \(scan.status)): \(error)\n\(scan.stderrText)", file: file, line: line)
            return []
        }
    }

    func testChecksumsLayoutAndThePackageDependsOnExactlyWhatTheBinaryLinks() throws {
        let dist = try DistArtifacts.located()
        let checked = try run("/bin/sh", ["-c", #"cd "$1" && sha256sum --check --strict SHA256SUMS"#, "sh", dist.directory])
        XCTAssertEqual(checked.status, 0, checked.stdoutText + checked.stderrText)
        XCTAssertEqual(checked.stdoutText.split(separator: "\n").count, 2, checked.stdoutText)

        let listing = try run("/usr/bin/tar", ["-tzf", dist.tarball])
        let themes = try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/themes").filter { $0.hasSuffix(".theme") }
        let guide = try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/docs").filter { $0.hasSuffix(".md") && $0 != "DESIGN.md" }
        let files = ["bin/fleettrust", "share/man/man1/fleettrust.1", "share/bash-completion/completions/fleettrust",
                     "share/zsh/site-functions/_fleettrust", "share/fish/vendor_completions.d/fleettrust.fish"]
            + themes.map { "share/fleettrust/themes/" + $0 } + guide.map { "share/doc/fleettrust/" + $0 } + ["share/doc/fleettrust/copyright"]
        XCTAssertEqual(Set(listing.stdoutText.split(separator: "\n").map(String.init).filter { !$0.hasSuffix("/") }),
                       Set(files.map { dist.tarballTop + "/" + $0 }), "the tarball is laid out as `make install` lays out a prefix")

        for (field, expected) in [("Package", "fleettrust"), ("Architecture", "amd64"), ("Section", "admin"), ("Priority", "optional")] {
            XCTAssertEqual(try run("/usr/bin/dpkg-deb", ["--field", dist.package, field]).stdoutText, expected + "\n", field)
        }
        for field in ["Version", "Maintainer", "Description", "Installed-Size"] {
            XCTAssertFalse(try run("/usr/bin/dpkg-deb", ["--field", dist.package, field]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, field)
        }
        let contents = try run("/usr/bin/dpkg-deb", ["--contents", dist.package]).stdoutText
        for path in ["./usr/bin/fleettrust", "./usr/share/man/man1/fleettrust.1.gz", "./usr/share/fleettrust/themes/high-contrast.theme",
                     "./usr/share/zsh/vendor-completions/_fleettrust", "./usr/share/doc/fleettrust/install.md",
                     "./usr/share/doc/fleettrust/copyright"] {
            XCTAssertTrue(contents.contains(" \(path)\n"), "the package lacks \(path): \(contents)")
        }
        for line in contents.split(separator: "\n") {
            XCTAssertTrue(line.contains(" root/root "), "every file belongs to root: \(line)")
        }

        let unpacked = scratch + "/deb"
        XCTAssertEqual(try run("/usr/bin/dpkg-deb", ["--extract", dist.package, unpacked]).status, 0)
        try assertDependsNamesThePackageOfEveryLibraryTheBinaryNeeds(binary: unpacked + "/usr/bin/fleettrust", package: dist.package)
        let sections = try run("/usr/bin/readelf", ["--section-headers", "--wide", unpacked + "/usr/bin/fleettrust"]).stdoutText
        XCTAssertFalse(sections.contains(".symtab") || sections.contains(".debug_info"), "the binary is shipped stripped")
        // A search path beside the binary would load a library planted next to a copy of it.
        let dynamic = try run("/usr/bin/readelf", ["--dynamic", unpacked + "/usr/bin/fleettrust"]).stdoutText
        XCTAssertFalse(dynamic.contains("RPATH") || dynamic.contains("RUNPATH"), "the binary names no library search path: \(dynamic)")
    }

    /// Both packages carry the licence notices at Debian's place, the same text, covering every
    /// package Package.swift names, BoringSSL and the Swift runtime linked into the binary.
    func testBothPackagesCarryTheLicenceNoticesOfEverythingTheBinaryLinks() throws {
        let dist = try DistArtifacts.located()
        let fromTarball = try run("/usr/bin/tar", ["-xzOf", dist.tarball, dist.tarballTop + "/share/doc/fleettrust/copyright"])
        XCTAssertEqual(fromTarball.status, 0, fromTarball.stderrText)
        let fromPackage = try run("/bin/sh", ["-c", #"dpkg-deb --fsys-tarfile "$1" | tar -xOf - ./usr/share/doc/fleettrust/copyright"#,
                                              "sh", dist.package])
        XCTAssertEqual(fromPackage.status, 0, fromPackage.stderrText)
        XCTAssertEqual(fromTarball.stdoutText, fromPackage.stdoutText, "the tarball and the package carry different notices")
        try ThirdPartyNotices.assertCoversEverythingLinked(fromPackage.stdoutText, packageRoot: packageRoot, "the package's copyright")
    }

    /// `Depends` against the binary: every library it needs (ELF NEEDED) comes from a Debian
    /// package that `Depends` names, and `ldd` resolves everything outside the Swift toolchain.
    private func assertDependsNamesThePackageOfEveryLibraryTheBinaryNeeds(binary: String, package: String) throws {
        let depends = try run("/usr/bin/dpkg-deb", ["--field", package, "Depends"]).stdoutText
        let named = Set(depends.split(separator: ",").compactMap { $0.split(separator: " ").first.map(String.init) })
        let needed = try run("/usr/bin/objdump", ["-p", binary]).stdoutText.split(separator: "\n")
            .filter { $0.contains("NEEDED") }.compactMap { $0.split(separator: " ").last.map(String.init) }
        XCTAssertTrue(Set(needed).isSuperset(of: ["libssh.so.4", "libcrypto.so.3", "libc.so.6"]), "\(needed)")
        for library in needed {
            let owner = try run("/usr/bin/dpkg", ["--search", "*/" + library])
            let packages = Set(owner.stdoutText.split(separator: "\n").compactMap { $0.split(separator: ":").first.map(String.init) })
            XCTAssertFalse(packages.isDisjoint(with: named), "\(library) comes from \(packages), which Depends (\(depends)) does not name")
        }
        let ldd = try run("/usr/bin/ldd", [binary])
        XCTAssertEqual(ldd.status, 0, ldd.stderrText)
        let toolchain = try HiddenToolchain.directory()
        for line in ldd.stdoutText.split(separator: "\n") {
            XCTAssertFalse(line.contains("not found") || line.contains(toolchain + "/") || line.contains("libswift")
                           || line.contains("libFoundation") || line.contains("libdispatch"), "ldd: \(line)")
        }
    }

    func testTarballBinaryRunsWithTheToolchainHiddenScansAndOpensTheDashboardWithItsThemes() throws {
        let dist = try DistArtifacts.located()
        let prefix = try dist.unpackTarball(into: scratch + "/unpacked")
        let binary = prefix + "/bin/fleettrust"
        let hidden = try HiddenToolchain.launcher()
        let tested = try run(hidden[0], Array(hidden.dropFirst()) + [BuiltProducts.fleettrust, "--version"])
        XCTAssertNotEqual(tested.status, 0, "the toolchain is not hidden: the tested build ran without it")
        XCTAssertTrue(tested.stderrText.contains("libswift"), tested.stderrText)

        let version = try run(hidden[0], Array(hidden.dropFirst()) + [binary, "--version"])
        XCTAssertEqual(version.status, 0, version.stderrText)
        let lines = version.stdoutText.split(separator: "\n")
        XCTAssertEqual(lines.first.map(String.init), try testedVersion(), "the release carries the version of this tree")
        let shipped = String(lines.first?.dropFirst("fleettrust ".count) ?? "")
        XCTAssertEqual(dist.tarballTop, "fleettrust-\(shipped)-linux-x86_64")
        XCTAssertTrue(lines.count == 3 && lines[1].hasPrefix("libssh 0.") && lines[2].hasPrefix("OpenSSL 3."), version.stdoutText)

        let fleet = try TestFleet.start(hosts: 5)
        self.fleet = fleet
        let scan = try run(hidden[0], Array(hidden.dropFirst()) + [binary, "scan", "--inventory", fleet.inventoryPath,
                                                                   "--known-hosts", fleet.knownHostsPath, "--format", "json"])
        XCTAssertEqual(scan.status, 2, "changed and revoked hosts make the exit status 2: \(scan.stderrText)")
        XCTAssertEqual(statuses(scan), fleetStatuses)

        // The theme is found only beside bin/ (the unpacked prefix is far from any source tree).
        let terminal = try DashboardTmux(arguments: Array(hidden.dropFirst()) + [binary, "--inventory", fleet.inventoryPath,
                                                                                 "--known-hosts", fleet.knownHostsPath,
                                                                                 "--theme", "high-contrast", "--read-only"],
                                         executable: hidden[0])
        self.terminal = terminal
        let (filled, screen) = terminal.waitFor(timeout: 40) { !$0.contains("scanning") && $0.contains("R revoked") }
        XCTAssertTrue(filled, screen)
        let rows = screen.split(separator: "\n")
        for (host, status) in zip(fleet.hosts, ["T trusted", "T trusted", "N new", "C changed", "R revoked"]) {
            XCTAssertEqual(rows.filter { $0.contains(host.endpoints[0].label + " ") && $0.contains(status) }.count, 1, "\(host.name): \(screen)")
        }
        terminal.send("q")
        let (ended, after) = terminal.waitFor { $0.contains("\(DashboardTmux.exitMarker)0") }
        XCTAssertTrue(ended, after)
    }

    func testPackageInstallsWithAptIntoAFreshDebian12RootWhereManVersionAndScanWorkAndRemoveTakesItAway() throws {
        let dist = try DistArtifacts.located()
        let root = try DebianRoot(packageRoot: packageRoot, scratch: scratch)
        self.root = root
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.path + (try HiddenToolchain.directory())), "the root has a Swift toolchain")
        let package = try root.copyIn(dist.package, as: URL(fileURLWithPath: dist.package).lastPathComponent)
        let updated = try root.run(["apt-get", "update", "-qq"], limit: 300)
        XCTAssertEqual(updated.status, 0, "apt-get update in the Debian root cannot reach its source: \(updated.stdoutText)\(updated.stderrText)")
        let installed = try root.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", package, "man-db"], limit: 600)
        XCTAssertEqual(installed.status, 0, installed.stdoutText + installed.stderrText)

        let version = try root.run(["fleettrust", "--version"])
        XCTAssertEqual(version.status, 0, version.stderrText)
        XCTAssertEqual(version.stdoutText.split(separator: "\n").first.map(String.init), try testedVersion())
        let page = try root.run(["man", "-w", "fleettrust"])
        XCTAssertEqual(page.stdoutText, "/usr/share/man/man1/fleettrust.1.gz\n", page.stderrText)
        let rendered = try root.run(["man", "fleettrust"])
        XCTAssertTrue(rendered.stdoutText.contains("EXIT STATUS") && rendered.stdoutText.contains("known_hosts"), rendered.stderrText)

        let fleet = try TestFleet.start(hosts: 5)
        self.fleet = fleet
        let inventory = try root.copyIn(fleet.inventoryPath, as: "inventory.txt")
        let knownHosts = try root.copyIn(fleet.knownHostsPath, as: "known_hosts")
        let scan = try root.run(["fleettrust", "scan", "--inventory", inventory, "--known-hosts", knownHosts, "--format", "json"])
        XCTAssertEqual(scan.status, 2, scan.stderrText)
        XCTAssertEqual(statuses(scan), fleetStatuses)

        let removed = try root.run(["apt-get", "remove", "-y", "-qq", "fleettrust"], limit: 300)
        XCTAssertEqual(removed.status, 0, removed.stdoutText + removed.stderrText)
        for path in ["/usr/bin/fleettrust", "/usr/share/man/man1/fleettrust.1.gz", "/usr/share/fleettrust"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: root.path + path), "apt-get remove left \(path)")
        }
    }
}
