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
        lines.append(ScreenLine(" Status letters: . pending  T trusted  N new  C changed  R revoked  P pin mismatch  U unreachable  E error", .dim))
        lines.append(ScreenLine(" In confirmations, y saves and any other key cancels; a changed key is replaced only by typing the host name.", .dim))
        return lines
    }
}
