import FleetTrustCore

/// The `?` screen: every binding from the key table, so help cannot drift from behaviour, and the
/// legend of every letter and code the list shows (status letters from the status type itself).
/// Lines wrap to the terminal; the screen scrolls, so it is whole at 80×24.
enum HelpView {
    static func lines(width: Int) -> [ScreenLine] {
        var lines = [ScreenLine(" Keys (j/k, PgUp/PgDn scroll this page; any other key goes back)", .dialogTitle)]
        for binding in KeyBindings.list {
            let label = "  " + DisplayWidth.fit(binding.label, to: 8) + "  "
            let wrapped = DisplayWidth.wrap(binding.help, width: max(10, width - DisplayWidth.of(label)), indent: "")
            for (number, text) in wrapped.enumerated() {
                var line = ScreenLine()
                line.append(number == 0 ? label : String(repeating: " ", count: DisplayWidth.of(label)), .statusKey)
                line.append(text)
                lines.append(line)
            }
        }
        lines.append(ScreenLine())
        let letters = HostStatus.allCases.map { "\($0.letter) \($0.rawValue)" }.joined(separator: "  ")
        for text in [
            " Status letters: " + letters + " (u untrusted, X expired and M name-mismatch are for TLS endpoints;"
                + " p unpinned: the policy needs a pin; ! unchecked: the policy is off)",
            " KNOWN_H: ok trusted  ok-CA trusted by a @cert-authority line  new nothing recorded  unrec type not recorded"
                + "  CHANGED another key recorded  REVOKED @revoked  IP-DIFF address recorded with another key"
                + "  INVALID forged, undecodable or user certificate",
            " PIN: match  MISMATCH no key pinned  report! mismatch in report mode  expired  - no pin applies",
            " METHOD: kh known_hosts  ca certificate authority  bare name without port  alias additional name  pin"
                + "  ca-pin pinned CA  chain TLS certificate chain  pin-only / OFF! the host's policy",
            " KEY TYPES of a TLS row: its protocol and the days left of its earliest-expiring certificate;"
                + " FINGERPRINT of a TLS row: the leaf's pin-sha256",
            " ~ drift since the last scan (history): ! REVERTED to a key seen before  ~ changed  - type removed  + type added",
            " FINGERPRINT is the key ssh would meet (the detail view lists every key). * marks a host for a batch.",
            " In confirmations, y saves and any other key cancels; a changed key is replaced only by typing the host name.",
        ] {
            lines += DisplayWidth.wrap(text, width: max(10, width - 1), indent: "   ").map { ScreenLine($0, .dim) }
        }
        return lines
    }
}
