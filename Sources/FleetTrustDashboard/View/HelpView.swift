/// The `?` screen: every binding from the key table, so help cannot drift from behaviour.
enum HelpView {
    static func lines(width: Int) -> [ScreenLine] {
        var lines = [ScreenLine(" Keys", .dialogTitle)]
        for binding in KeyBindings.list {
            var line = ScreenLine()
            line.append("  " + DisplayWidth.fit(binding.label, to: 8), .statusKey)
            line.append("  " + binding.help)
            lines.append(line)
        }
        lines.append(ScreenLine())
        lines.append(ScreenLine(" Status letters: . pending  T trusted  N new  C changed  R revoked  P pin mismatch  I invalid certificate", .dim))
        lines.append(ScreenLine("                 p unpinned (policy needs a pin)  ! unchecked (policy off)  U unreachable  E error", .dim))
        lines.append(ScreenLine(" KNOWN_H: ok trusted  ok-CA trusted by a @cert-authority line  new nothing recorded  unrec type not recorded", .dim))
        lines.append(ScreenLine("          CHANGED another key recorded  REVOKED @revoked  IP-DIFF address recorded with another key", .dim))
        lines.append(ScreenLine("          INVALID forged, undecodable or user certificate", .dim))
        lines.append(ScreenLine(" PIN: match  MISMATCH no key pinned  report! mismatch in report mode  expired  - no pin applies", .dim))
        lines.append(ScreenLine(" METHOD: kh known_hosts  ca certificate authority  bare name without port  alias additional name  pin", .dim))
        lines.append(ScreenLine("         ca-pin pinned CA  pin-only / OFF! the host's policy", .dim))
        lines.append(ScreenLine(" ~ drift since the last scan (history): ! REVERTED to a key seen before  ~ changed  - type removed  + type added", .dim))
        lines.append(ScreenLine(" FINGERPRINT is the key ssh would meet (the detail view lists every key).", .dim))
        lines.append(ScreenLine(" In confirmations, y saves and any other key cancels; a changed key is replaced only by typing the host name.", .dim))
        return lines
    }
}
