import FleetTrustTestFleet
import Foundation
import XCTest

/// A fresh Debian 12 system to install into, as a jump host would be: a pristine copy of the
/// `debootstrap --variant=minbase` root that `scripts/debian-root` made from this machine's apt
/// source (cached under `.build/`, made on first use). Commands run in it with `chroot`, inside a
/// mount namespace of their own that mounts `/proc` and `/dev` for them and ends with them, so
/// nothing stays mounted under the copy. A debootstrap that cannot reach the apt source is a
/// failure, never a skip.
final class DebianRoot {
    let path: String

    init(packageRoot: String, scratch: String) throws {
        let archive = packageRoot + "/.build/debian-12-minbase.tar"
        let made = try ProgramRun.run(packageRoot + "/scripts/debian-root", [archive], limit: 1200)
        guard made.status == 0 else {
            throw TestFleetError.toolFailed("no Debian 12 root (status \(made.status)): \(made.stdoutText)\(made.stderrText)")
        }
        path = scratch + "/debian-root"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let unpacked = try ProgramRun.run("/usr/bin/tar", ["--numeric-owner", "-xf", archive, "-C", path], limit: 300)
        guard unpacked.status == 0 else { throw TestFleetError.toolFailed("tar -xf \(archive): \(unpacked.stderrText)") }
        // apt inside the root resolves the mirror with the host's resolver configuration.
        try? FileManager.default.removeItem(atPath: path + "/etc/resolv.conf")
        try FileManager.default.copyItem(atPath: "/etc/resolv.conf", toPath: path + "/etc/resolv.conf")
    }

    /// `unshare -m`, then a shell that mounts `/proc` and `/dev` under the root and execs `chroot`
    /// (the PID stays the one started); the root's path is an argument, never part of the script.
    private var chroot: [String] {
        ["-m", "/bin/sh", "-c", #"root=$1; shift; mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" && exec chroot "$root" "$@""#,
         "sh", path]
    }

    private let environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
                               "DEBIAN_FRONTEND": "noninteractive", "TERM": "dumb"]

    /// `chroot ROOT arguments…` to completion, with a plain root environment.
    func run(_ arguments: [String], limit: Double = 120) throws -> ProgramRun {
        try ProgramRun.run("/usr/bin/unshare", chroot + arguments, limit: limit, environment: environment)
    }

    /// `chroot ROOT arguments…` left running (a server), stopped by its PID through the result.
    func start(_ arguments: [String], stderrPath: String) throws -> SpawnedProcess {
        try SpawnedProcess("/usr/bin/unshare", chroot + arguments, stderrPath: stderrPath, environment: environment)
    }

    /// Copies a file of this machine into the root, returning its path inside the root.
    func copyIn(_ file: String, as name: String) throws -> String {
        try? FileManager.default.removeItem(atPath: path + "/tmp/" + name)
        try FileManager.default.copyItem(atPath: file, toPath: path + "/tmp/" + name)
        return "/tmp/" + name
    }

    /// Removes the copy, unless something is still mounted under it (then removing would reach
    /// into the mounted system): that is a failure of its own. Whether it is gone.
    @discardableResult
    func remove() -> Bool {
        let mounts = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        guard !mounts.contains(" \(path)/") else {
            XCTFail("something is still mounted under \(path); it is left in place")
            return false
        }
        try? FileManager.default.removeItem(atPath: path)
        return true
    }
}

