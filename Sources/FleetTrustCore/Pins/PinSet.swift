import Foundation

/// The pins in force for a run, from one or more pin files, and how they are applied.
///
/// Pins are a second opinion next to known_hosts: a host with pins must present a pinned
/// key whatever known_hosts says. `report` mode (`--pins-mode report`) shows mismatches
/// without failing them, for rolling new pins out.
public struct PinSet: Sendable {
    public enum Mode: String, Sendable, Codable, CaseIterable {
        case enforce
        case report
    }

    public var pins: [Pin]
    public var mode: Mode

    public init(pins: [Pin], mode: Mode = .enforce) {
        self.pins = pins
        self.mode = mode
    }

    public init(files: [PinFile], mode: Mode = .enforce) {
        self.init(pins: files.flatMap(\.pins), mode: mode)
    }

    /// Judges the keys a host presented (their SHA-256 fingerprints) against the pins whose
    /// patterns match one of the host's lookup names (as known_hosts would look it up,
    /// `[host]:port` for a non-standard port).
    public func judge(names: [String], fingerprints: [String], now: Date) -> PinJudgement {
        let applying = pins.filter { pin in names.contains { PinPatterns.match(name: $0, list: pin.patterns) == .match } }
        guard !applying.isEmpty else { return PinJudgement(verdict: .unpinned, evidence: []) }
        let binding = applying.filter { !($0.expires?.hasPassed(at: now) ?? false) }
        guard !binding.isEmpty else { return PinJudgement(verdict: .expired, evidence: applying) }
        let presented = Set(fingerprints.compactMap { try? PinFingerprint.parse($0).get() })
        let matching = binding.filter { !presented.isDisjoint(with: $0.fingerprints) }
        if !matching.isEmpty { return PinJudgement(verdict: .matched, evidence: matching) }
        return PinJudgement(verdict: mode == .report ? .reportedMismatch : .mismatch, evidence: binding)
    }
}

/// The pin answer for a host, with the pin lines that decided it.
public struct PinJudgement: Hashable, Sendable {
    public var verdict: PinVerdict
    /// For `matched`, the lines holding the presented key; for a mismatch, every binding
    /// line (the keys that would have been accepted); for `expired`, the expired lines.
    public var evidence: [Pin]

    public var locations: [String] { evidence.map(\.location) }
    public var acceptedFingerprints: [PinFingerprint] {
        var seen: [PinFingerprint] = []
        for fingerprint in evidence.flatMap(\.fingerprints) where !seen.contains(fingerprint) { seen.append(fingerprint) }
        return seen
    }
}

/// known_hosts pattern lists, shared with the known_hosts matcher.
typealias PinPatterns = KnownHostPattern
