import FleetTrustTestFleet
import Foundation
import XCTest

/// What `make dist` wrote (the tarball, the .deb, SHA256SUMS), found through `FLEETTRUST_DIST_DIR`,
/// which `make test-dist` sets. Without it the tests that need a release for a machine without
/// Swift are skipped, saying how to run them; with it, anything missing is a failure.
struct DistArtifacts {
    let directory: String
    let tarball: String
    let package: String

    static func located() throws -> DistArtifacts {
        guard let directory = ProcessInfo.processInfo.environment["FLEETTRUST_DIST_DIR"], !directory.isEmpty else {
            throw XCTSkip("SKIPPED: no FLEETTRUST_DIST_DIR; `make test-dist` builds the static release and runs this test on it")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        let tarballs = names.filter { $0.hasPrefix("fleettrust-") && $0.hasSuffix("-linux-x86_64.tar.gz") }
        let packages = names.filter { $0.hasPrefix("fleettrust_") && $0.hasSuffix("_amd64.deb") }
        guard tarballs.count == 1, packages.count == 1, names.contains("SHA256SUMS") else {
            throw DistArtifactsError(message: "\(directory) should hold one fleettrust-*-linux-x86_64.tar.gz, one "
                                     + "fleettrust_*_amd64.deb and SHA256SUMS (run `make dist`); it holds \(names.sorted())")
        }
        return DistArtifacts(directory: directory, tarball: directory + "/" + tarballs[0], package: directory + "/" + packages[0])
    }

    /// The tarball's top directory name, `fleettrust-VERSION-linux-x86_64`.
    var tarballTop: String {
        String(URL(fileURLWithPath: tarball).lastPathComponent.dropLast(".tar.gz".count))
    }

    /// Unpacks the tarball into `directory` and returns its prefix (the directory holding `bin/`).
    func unpackTarball(into directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let unpacked = try ProgramRun.run("/usr/bin/tar", ["-xzf", tarball, "-C", directory])
        guard unpacked.status == 0 else { throw TestFleetError.toolFailed("tar -xzf \(tarball): \(unpacked.stderrText)") }
        return directory + "/" + tarballTop
    }
}

/// A dist directory that is not what `make dist` writes.
struct DistArtifactsError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
