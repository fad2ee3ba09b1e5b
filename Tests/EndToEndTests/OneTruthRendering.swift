import Foundation
import FleetTrustCore

/// What every rendering of a judged host must show, derived from the scan JSON with small tables
/// taken from the README (list codes, status letters, table key labels), written out here
/// independently of the product's renderers so that a renderer deciding on its own is caught.
enum OneTruthRendering {
    /// The status letter of the dashboard's list and detail view.
    static func letter(_ status: HostStatus) -> String {
        switch status {
        case .pending: return "."
        case .trusted: return "T"
        case .new: return "N"
        case .changed: return "C"
        case .revoked: return "R"
        case .pinMismatch: return "P"
        case .invalidCertificate: return "I"
        case .unpinned: return "p"
        case .unchecked: return "!"
        case .unreachable: return "U"
        case .error: return "E"
        case .untrusted: return "u"
        case .expired: return "X"
        case .nameMismatch: return "M"
        case .splitView: return "S"
        case .unverified: return "V"
        }
    }

    /// What the detail view says proves a key: known_hosts, a CA line, a pin naming it; none otherwise.
    static func proof(verdict: KeyVerdict, pin: PinVerdict) -> String {
        let proofs = [verdict == .trusted ? "known_hosts" : nil, verdict == .trustedByCA ? "@cert-authority" : nil,
                      pin == .matched ? "pin" : nil].compactMap { $0 }
        return proofs.isEmpty ? "none (only seen)" : proofs.joined(separator: " + ")
    }

    /// The word the list shows after the letter (the detail view shows the raw status).
    static func listWord(_ status: HostStatus) -> String {
        status == .invalidCertificate ? "invalid-cert" : status.rawValue
    }

    /// KNOWN_H: an alarm about any key wins (revoked, changed, ip-mismatch, invalid), else the
    /// verdict of the key `ssh` meets, else `-`.
    static func knownHostsCode(_ host: RecordedScan.Host) -> String {
        let codes: [KeyVerdict: String] = [.trusted: "ok", .trustedByCA: "ok-CA", .new: "new", .notRecorded: "unrec",
                                           .changed: "CHANGED", .revoked: "REVOKED", .ipMismatch: "IP-DIFF",
                                           .invalidCertificate: "INVALID"]
        for alarm in [KeyVerdict.revoked, .changed, .ipMismatch, .invalidCertificate]
            where host.keys.contains(where: { $0.verdict == alarm || $0.plainKeyVerdict == alarm }) {
            return codes[alarm]!
        }
        return host.keys.first(where: \.negotiated).map { codes[$0.verdict]! } ?? "-"
    }

    /// PIN: the host's pin answer.
    static func pinCode(_ verdict: PinVerdict?) -> String {
        switch verdict ?? .unpinned {
        case .unpinned: return "-"
        case .matched: return "match"
        case .mismatch: return "MISMATCH"
        case .expired: return "expired"
        case .reportedMismatch: return "report!"
        case .notListed: return "other"
        }
    }

    /// METHOD: the JSON's `method` (`known-hosts+pin`) in the list's short codes (`kh+pin`).
    static func methodCode(_ method: String?) -> String {
        let codes = ["known-hosts": "kh", "cert-authority": "ca", "bare-name": "bare", "additional-name": "alias", "pin": "pin", "ca-pin": "ca-pin"]
        guard let method else { return "" }
        return method.split(separator: "+").map { codes[String($0)] ?? "?\($0)" }.joined(separator: "+")
    }

    /// The table's KEYS cell: short types, `*` the key ssh meets, `!` an alarm, `-` not recorded.
    static func tableKeys(_ host: RecordedScan.Host) -> String {
        guard !host.keys.isEmpty else { return "-" }
        return host.keys.map { key -> String in
            var label = shortType(key.type)
            if key.negotiated { label += "*" }
            if [.changed, .revoked, .ipMismatch, .invalidCertificate].contains(key.verdict) { label += "!" }
            if key.verdict == .notRecorded { label += "-" }
            return label
        }.joined(separator: ",")
    }

    static func shortType(_ type: String) -> String {
        let certificate = "-cert-v01@openssh.com"
        if type.hasSuffix(certificate) { return shortType(String(type.dropLast(certificate.count))) + "-cert" }
        switch type {
        case "ssh-ed25519": return "ed25519"
        case "ssh-rsa", "rsa-sha2-256", "rsa-sha2-512": return "rsa"
        case let t where t.hasPrefix("ecdsa-sha2-"): return "ecdsa-" + t.dropFirst("ecdsa-sha2-".count)
        default: return type
        }
    }

    /// `text` as a column `width` wide shows it: cut with `…` when longer.
    static func fitted(_ text: String, width: Int) -> String {
        text.count > width ? String(text.prefix(width - 1)) + "…" : text
    }
}

/// A fixed-column text table (the scan table, the dashboard list) read back by its header: each
/// cell runs from its title's column to the next title's.
struct ColumnReader {
    let starts: [(title: String, offset: Int)]

    /// Finds each title in `header`, in order; nil when one is missing.
    init?(header: String, titles: [String]) {
        let characters = Array(header)
        var found: [(String, Int)] = []
        var from = 0
        for title in titles {
            let needle = Array(title)
            guard let offset = (from...max(from, characters.count - needle.count)).first(where: { start in
                start + needle.count <= characters.count && Array(characters[start..<start + needle.count]) == needle
                    && (start == 0 || characters[start - 1] == " ")
            }) else { return nil }
            found.append((title, offset))
            from = offset + needle.count
        }
        starts = found
    }

    /// Width of the column titled `title` (up to the next title, less the separator).
    func width(of title: String, separator: Int) -> Int? {
        guard let index = starts.firstIndex(where: { $0.title == title }), index + 1 < starts.count else { return nil }
        return starts[index + 1].offset - starts[index].offset - separator
    }

    /// The cells of `row`, trimmed, by title.
    func cells(_ row: String) -> [String: String] {
        let characters = Array(row)
        var cells: [String: String] = [:]
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1].offset : characters.count
            let lower = min(start.offset, characters.count), upper = min(max(end, lower), characters.count)
            cells[start.title] = String(characters[lower..<upper]).trimmingCharacters(in: .whitespaces)
        }
        return cells
    }
}
