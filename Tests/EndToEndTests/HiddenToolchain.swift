import Foundation
import XCTest

/// A machine without Swift, made from this one: a program started through `launcher` runs in a
/// mount namespace of its own where an empty tmpfs covers the Swift toolchain's directory, so a
/// binary that needs the toolchain's libraries fails there as it would on a jump host. The mount
/// is private to that namespace and ends with its last process.
enum HiddenToolchain {
    /// The toolchain's top directory (`/opt/swift` for `/opt/swift/usr/bin/swift`), from the
    /// `swift` on the PATH, as PLATFORM.md measured it.
    static func directory() throws -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .map { "\($0)/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        let swift = try XCTUnwrap(path, "no swift on the PATH: cannot tell where the toolchain is")
        let resolved = URL(fileURLWithPath: swift).resolvingSymlinksInPath()
        let top = resolved.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        XCTAssertFalse(["/", "/usr", ""].contains(top), "the toolchain is installed in \(top): hiding it would hide the system")
        return top
    }

    /// `unshare -m` and a shell that mounts the tmpfs, then execs the program that follows (its
    /// PID stays the launcher's); the toolchain's path is an argument, never part of the script.
    static func launcher() throws -> [String] {
        ["/usr/bin/unshare", "-m", "/bin/sh", "-c", #"mount -t tmpfs fleettrust-no-toolchain "$0" && exec "$@""#, try directory()]
    }
}
