/// Which of a new host's keys a trust decision may save, and which it must leave out.
///
/// We prove each key type over its own connection, and nothing proves two connections reached the
/// same machine: a man in the middle can pass one connection to the real host and the next to a
/// rogue one. So trust on first use saves what `ssh -o StrictHostKeyChecking=accept-new` would
/// save, the one key `ssh` meets (for a certificate without a CA: the plain key it certifies, as
/// `ssh` falls back to), and nothing it would not meet. A key a pin names (or whose certificate a
/// pinned CA signed) is proved whatever connection brought it. Every other proved key is
/// withheld, and said so: a pin can vouch for it. `sync`, `scan --format known-hosts` and the
/// dashboard's `t` all choose through this one rule.
public struct FirstUseKeys: Hashable, Sendable {
    /// Keys a pin in force names, or whose certificate a pinned CA signed.
    public let provedByPin: [HostKey]
    /// The key `ssh` meets, when no pin proves it and it is among the keys offered for saving.
    public let firstUse: HostKey?
    /// The other offered keys: proved over connections of their own, vouched for by nothing.
    public let withheld: [HostKey]

    /// `offered` is the judgement's `.save` list (a new host's usable plain keys).
    public init(_ judged: JudgedHost, offered: [HostKey]) {
        let pin = judged.pin
        let proved = offered.filter { pin.pinned.contains($0.fingerprint) || pin.certifiedByPinnedCA.contains($0.fingerprint) }
        provedByPin = proved
        let meets = judged.negotiatedKey?.key.map(SharedKeys.plainKey(of:))
        let meetsFingerprint = meets?.sha256Fingerprint
        firstUse = offered.first { $0.sha256Fingerprint == meetsFingerprint && !proved.contains($0) }
        withheld = offered.filter { key in !proved.contains(key) && key.sha256Fingerprint != meetsFingerprint }
    }

    /// What trust on first use saves: the pin-proved keys and the key `ssh` meets.
    public var saved: [HostKey] { provedByPin + (firstUse.map { [$0] } ?? []) }

    /// One sentence on keys a trust decision left out, or nil when none is: which and why.
    /// `firstUse`: the decision trusted on first use (else only pins proved what it saves).
    public static func note(_ withheld: [HostKey], firstUse: Bool) -> String? {
        guard !withheld.isEmpty else { return nil }
        let keys = withheld.map { "\($0.kind.label) \($0.sha256Fingerprint)" }.joined(separator: ", ")
        let why = firstUse ? "proved over other connections than the key ssh meets, which may have reached another machine"
            : "no pin names them"
        return "not saved: \(keys): \(why) (pin them, from fingerprints their owner gives you, to save them)"
    }
}
