import Foundation
#if canImport(Glibc)
import Glibc
#endif
import FleetTrustTestFleet

/// A fresh directory per test (mode 0755, so that other users can reach into it), removed
/// afterwards, with the raw-byte helpers the store tests need.
struct StoreFaultScratch {
    let path: String
    static let sampleKeyLine = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKNVpLh/jJtEMGuMZHkgFkq6jkXKETMhrjGpsVTvO2Dc"

    init() throws {
        path = "/tmp/ft-store-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
    }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: file(name)))
    }

    func text(_ name: String) -> String {
        String(decoding: FileManager.default.contents(atPath: file(name)) ?? Data(), as: UTF8.self)
    }

    func entries(_ subdirectory: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: subdirectory.isEmpty ? path : file(subdirectory))) ?? []).sorted()
    }

    func status(_ name: String) -> stat {
        var s = stat()
        lstat(file(name), &s)
        return s
    }

    /// Runs `store-stress` as another user (uid and gid 1234) through util-linux `setpriv`.
    static func runAsOtherUser(_ arguments: [String]) throws -> ProgramRun {
        try ProgramRun.run("/usr/bin/setpriv", ["--reuid=1234", "--regid=1234", "--clear-groups",
                                                BuiltProducts.directory + "/store-stress"] + arguments)
    }

    func remove() {
        _ = try? Tool.run("/usr/bin/chattr", ["-R", "-i", "-a", path])
        try? FileManager.default.removeItem(atPath: path)
    }
}
