import Foundation
@testable import FleetTrustCore

/// Keys and `ssh-keygen` host certificates made once by `scripts/make-key-fixtures --judge` and
/// checked in (Fixtures/Judge), so the pure-judge tests run no `ssh-keygen`. A certificate is named
/// by the CA and the `ssh-keygen -s` arguments that made it; `days:FROM:TO` is a validity relative
/// to `now`, the instant the script ran, at which the tests judge.
enum JudgeFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/Judge")

    static let now: UInt64 = {
        let text = (try? String(contentsOf: directory.appendingPathComponent("now"), encoding: .utf8)) ?? ""
        return UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }()

    /// The public key `name` of fixture set `set`.
    static func key(_ set: String, _ name: String) throws -> HostKey {
        try HostKey(openSSHLine: line(set, name))
    }

    /// The `.pub` line of key `name`, as a `@cert-authority` line would hold it.
    static func line(_ set: String, _ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent("\(set)/\(name).pub"), encoding: .utf8)
    }

    /// The certificate `ssh-keygen -s CA -I id ARGS` made of the set's host key; `words` is the CA
    /// then the arguments.
    static func certificate(_ set: String, _ words: [String]) throws -> HostKey {
        let name = String(words.joined(separator: "_").map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
        return try key(set, name)
    }
}
