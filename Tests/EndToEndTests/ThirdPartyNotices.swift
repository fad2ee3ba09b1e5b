import Foundation
import XCTest

/// The licence notices (`share/doc/fleettrust/copyright`) that `make install` and both packages of
/// `make dist` ship: a binary that links a package must carry its copyright lines and licence text,
/// so the check reads the package list from Package.swift itself, not from a list kept beside it
/// that would go stale with the next dependency.
enum ThirdPartyNotices {
    /// The checkout directory names of Package.swift's dependencies (the last component of each
    /// `.package(url:)`, which is where SwiftPM checks it out).
    static func dependencies(packageRoot: String) throws -> [String] {
        let manifest = try String(contentsOfFile: packageRoot + "/Package.swift", encoding: .utf8)
        let urls = try NSRegularExpression(pattern: #"\.package\(\s*url:\s*"([^"]+)""#)
        let range = NSRange(manifest.startIndex..., in: manifest)
        return urls.matches(in: manifest, range: range).compactMap { match in
            Range(match.range(at: 1), in: manifest).map {
                let name = URL(string: String(manifest[$0]))?.lastPathComponent ?? ""
                return name.hasSuffix(".git") ? String(name.dropLast(4)) : name
            }
        }
    }

    /// The file is a Debian machine-readable copyright file whose every `Files` paragraph has a
    /// licence with its full text, and it covers every dependency of Package.swift, the Swift
    /// runtime, and BoringSSL (inside swift-crypto, under the OpenSSL and SSLeay licences).
    static func assertCoversEverythingLinked(_ text: String, packageRoot: String, _ what: String,
                                             file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertTrue(text.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"),
                      "\(what) is not a copyright-format 1.0 file: \(text.prefix(200))", file: file, line: line)
        let paragraphs = text.components(separatedBy: "\n\n").filter { $0.hasPrefix("Files: ") }
        for paragraph in paragraphs {
            let lines = paragraph.split(separator: "\n", omittingEmptySubsequences: false)
            let licence = lines.firstIndex { $0.hasPrefix("License: ") }
            XCTAssertTrue(licence.map { lines.count - $0 > 5 } ?? false,
                          "\(what): a paragraph without a licence's full text: \(paragraph.prefix(300))", file: file, line: line)
            XCTAssertTrue(lines.contains { $0.hasPrefix("Copyright: ") && $0.count > "Copyright: ".count + 3 },
                          "\(what): a paragraph without copyright: \(paragraph.prefix(300))", file: file, line: line)
        }
        let dependencies = try dependencies(packageRoot: packageRoot)
        XCTAssertTrue(dependencies.contains("swift-crypto") && dependencies.count >= 5, "\(dependencies)", file: file, line: line)
        let covered = paragraphs.compactMap { $0.split(separator: "\n").first.map { String($0.dropFirst("Files: ".count)) } }
        for dependency in dependencies {
            XCTAssertTrue(covered.contains("checkouts/\(dependency)/*"), "\(what) lacks \(dependency): \(covered)", file: file, line: line)
        }
        let boringSSL = paragraphs.first { $0.hasPrefix("Files: checkouts/swift-crypto/Sources/CCryptoBoringSSL/*\n") } ?? ""
        for notice in ["BoringSSL", "Eric Young (eay@cryptsoft.com)", "The OpenSSL Project", "Permission to use, copy, modify, and/or distribute"] {
            XCTAssertTrue(boringSSL.contains(notice), "\(what): BoringSSL's notices lack \(notice)", file: file, line: line)
        }
        XCTAssertTrue(paragraphs.contains { $0.hasPrefix("Files: checkouts/swift-crypto/Sources/CCryptoBoringSSL/third_party/fiat/*\n") },
                      "\(what): fiat-crypto's licence (inside BoringSSL) is missing", file: file, line: line)
        let runtime = paragraphs.first { $0.contains("The Swift standard library and runtime") } ?? ""
        XCTAssertTrue(runtime.contains("License: Apache-2.0 with Swift exception") && runtime.contains("Runtime Library Exception"),
                      "\(what): the Swift runtime's licence is missing", file: file, line: line)
        XCTAssertTrue(paragraphs.contains { $0.contains("lib_FoundationICU.a") && $0.contains("UNICODE LICENSE V3") },
                      "\(what): ICU's licence is missing", file: file, line: line)
    }
}
