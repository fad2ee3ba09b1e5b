import Foundation

/// `fleettrust tidy` output: where finding kinds become words, and findings sentences.
public enum TidyReport {
    /// The JSON and command-line word of a kind.
    public static func word(_ kind: TidyFindingKind) -> String {
        switch kind {
        case .duplicate: return "duplicate"
        case .conflicting: return "conflicting"
        case .unmatchable: return "unmatchable"
        case .revokedRecorded: return "revoked-recorded"
        case .unknownHost: return "unknown-host"
        case .unusedKeyType: return "unused-key-type"
        case .sharedKey: return "shared-key"
        }
    }

    public static func kind(word: String) -> TidyFindingKind? { TidyFindingKind.allCases.first { self.word($0) == word } }

    /// One sentence saying what is wrong and why.
    public static func message(_ finding: TidyFinding) -> String {
        let names = finding.names.map { Sanitizer.clean($0, limit: 200) }.joined(separator: ", ")
        let others = finding.related.map { "line \($0.line)" + ($0.path == finding.location.path ? "" : " of \(Sanitizer.clean($0.path))") }
            .joined(separator: ", ")
        let type = Sanitizer.clean(finding.keyType ?? "", limit: 64)
        switch finding.kind {
        case .duplicate:
            return "the same key is recorded for \(names.isEmpty ? "the same host field" : names) at \(others)"
        case .conflicting:
            return "\(names) has another \(type) key at \(others); ssh accepts either"
        case .unmatchable:
            return "ssh never uses this line: \(Sanitizer.clean(finding.reason ?? "", limit: 200))"
        case .revokedRecorded:
            return "this key of \(names) is revoked by the @revoked line at \(others)"
        case .unknownHost:
            return names.isEmpty ? "this hashed entry matches no inventory host" : "no inventory host uses \(names)"
        case .unusedKeyType:
            return "\(names) presented no \(type) key at its last scan"
        case .sharedKey:
            return "the key of \(names) is also recorded for unrelated hosts at \(others)"
        }
    }

    struct Document: Encodable {
        struct Item: Encodable { let file: String; let line: Int; let kind: String; let names: [String]; let message: String }
        let findings: [Item]
    }

    /// `{"findings": [{"file", "line", "kind", "names", "message"}]}`, cleaned text throughout.
    public static func json(_ findings: [TidyFinding]) throws -> String {
        let items = findings.map { finding in
            Document.Item(file: CleanText(finding.location.path, limit: 4096).value, line: finding.location.line, kind: word(finding.kind),
                          names: finding.names.map { CleanText($0, limit: 300).value }, message: CleanText(message(finding), limit: 2000).value)
        }
        return String(decoding: try ReportJSON.encode(Document(findings: items)), as: UTF8.self)
    }

    /// `FILE:LINE  KIND  MESSAGE`, one line a finding, then a count.
    public static func table(_ findings: [TidyFinding]) -> String {
        var out = ""
        for finding in findings {
            out += "\(Sanitizer.clean(finding.location.path)):\(finding.location.line)  \(word(finding.kind))  \(message(finding))\n"
        }
        out += findings.isEmpty ? "no findings\n" : "\(Counted.of(findings.count, "finding"))\n"
        return out
    }
}
