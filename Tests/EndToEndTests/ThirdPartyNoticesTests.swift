import FleetTrustTestFleet
import Foundation
import XCTest

/// scripts/third-party-notices against this build's own SwiftPM workspace, and against the same
/// workspace with one more package: a package it resolved comes out with its notice, and one it
/// cannot give a notice for (no licence file, a licence it cannot name) stops it, naming the
/// package, so that `make dist` never ships a binary whose notices leave a dependency out.
final class ThirdPartyNoticesTests: XCTestCase {
    private var scratch = ""
    private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "ft-notices-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch + "/checkouts", withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// This build's workspace with `extra` added: its checkouts linked in, one more checkout made.
    private func workspace(adding extra: String, files: [String: String]) throws {
        let build = packageRoot + "/.build"
        let state = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: build + "/workspace-state.json")))
        guard var root = state as? [String: Any], var object = root["object"] as? [String: Any],
              var dependencies = object["dependencies"] as? [[String: Any]], let first = dependencies.first else {
            throw TestFleetError.toolFailed("\(build)/workspace-state.json has no dependencies")
        }
        for dependency in dependencies {
            let subpath = dependency["subpath"] as? String ?? ""
            try FileManager.default.createSymbolicLink(atPath: scratch + "/checkouts/" + subpath, withDestinationPath: build + "/checkouts/" + subpath)
        }
        var added = first
        added["subpath"] = extra
        added["packageRef"] = ["identity": extra.lowercased(), "kind": "remoteSourceControl", "location": "https://example.org/\(extra)", "name": extra]
        dependencies.append(added)
        object["dependencies"] = dependencies
        root["object"] = object
        try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: scratch + "/workspace-state.json"))
        for (path, text) in files {
            let file = scratch + "/checkouts/\(extra)/" + path
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: file, atomically: true, encoding: .utf8)
        }
    }

    private func notices() throws -> ProgramRun {
        try ProgramRun.run(packageRoot + "/scripts/third-party-notices", [scratch])
    }

    func testANewPackageComesOutWithItsCopyrightAndLicenceBesideEveryResolvedOne() throws {
        try workspace(adding: "swift-widgets", files: ["LICENSE": "MIT License\n\nCopyright (c) 2031 Widget Makers\n\n"
                                                          + "Permission is hereby granted, free of charge, to any person ...\n\nTHE SOFTWARE IS PROVIDED \"AS IS\" ...\n",
                                                       "Sources/Widgets/Widget.swift": "struct Widget {}\n"])
        let written = try notices()
        XCTAssertEqual(written.status, 0, written.stderrText)
        try ThirdPartyNotices.assertCoversEverythingLinked(written.stdoutText, packageRoot: packageRoot, "the notices")
        XCTAssertTrue(written.stdoutText.contains("Files: checkouts/swift-widgets/*\nCopyright: Copyright (c) 2031 Widget Makers\n"),
                      String(written.stdoutText.suffix(800)))
    }

    func testAPackageWithoutALicenceFileStopsItNamingThePackage() throws {
        try workspace(adding: "unlicensed", files: ["Sources/Unlicensed/Thing.swift": "// Copyright (c) 2031 Someone\n"])
        let written = try notices()
        XCTAssertEqual(written.status, 1, written.stdoutText)
        XCTAssertTrue(written.stderrText.contains("checkouts/unlicensed: no LICENSE file"), written.stderrText)
    }

    func testALicenceItCannotNameStopsItForAReview() throws {
        try workspace(adding: "copyleft", files: ["COPYING": "GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n"])
        let written = try notices()
        XCTAssertEqual(written.status, 1, written.stdoutText)
        XCTAssertTrue(written.stderrText.contains("checkouts/copyleft/COPYING: a licence this script cannot name"), written.stderrText)
    }
}
