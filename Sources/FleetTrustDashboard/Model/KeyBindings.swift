/// What a key does in the host list and detail views.
public enum DashboardAction: String, Sendable, CaseIterable {
    case moveUp, moveDown, pageUp, pageDown, top, bottom
    case detail, filter, cycleStatusFilter, cycleSort, mark
    case trust, pin, connect, forget, rescan, rescanAll
    case toggleMD5, help, quit
}

/// One row of the key table: the keys, how help shows them, and what they do.
public struct KeyBinding: Sendable {
    public var keys: [Key]
    public var label: String
    public var action: DashboardAction
    public var help: String
}

/// The key table, as data (htop's key-to-action table): `update` looks keys up here and the help
/// screen lists it, so the two cannot disagree.
public enum KeyBindings {
    public static let list: [KeyBinding] = [
        KeyBinding(keys: [.up, .character("k")], label: "↑ k", action: .moveUp, help: "move up"),
        KeyBinding(keys: [.down, .character("j")], label: "↓ j", action: .moveDown, help: "move down"),
        KeyBinding(keys: [.pageUp], label: "PgUp", action: .pageUp, help: "page up"),
        KeyBinding(keys: [.pageDown], label: "PgDn", action: .pageDown, help: "page down"),
        KeyBinding(keys: [.character("g"), .home], label: "g Home", action: .top, help: "first host"),
        KeyBinding(keys: [.character("G"), .end], label: "G End", action: .bottom, help: "last host"),
        KeyBinding(keys: [.enter], label: "Enter", action: .detail, help: "details of the selected host (Esc back)"),
        KeyBinding(keys: [.character("/")], label: "/", action: .filter,
                   help: "filter by text (Enter keeps it and selects the first match, Ctrl-U clears the line, Esc clears it)"),
        KeyBinding(keys: [.character("f")], label: "f", action: .cycleStatusFilter,
                   help: "cycle status filter: all, needs attention, new, changed, unreachable, trusted, drifted since last scan"),
        KeyBinding(keys: [.character("s")], label: "s", action: .cycleSort, help: "cycle sort: status, name, address"),
        KeyBinding(keys: [.character(" ")], label: "Space", action: .mark, help: "mark or unmark the host (for batch trust)"),
        KeyBinding(keys: [.character("t")], label: "t", action: .trust, help: "trust the selected host (in the list: the marked hosts, if any)"),
        KeyBinding(keys: [.character("p")], label: "p", action: .pin, help: "pin the presented fingerprints"),
        KeyBinding(keys: [.character("c")], label: "c", action: .connect, help: "connect with ssh (trusted hosts only)"),
        KeyBinding(keys: [.character("x")], label: "x", action: .forget, help: "forget the host's known_hosts entries"),
        KeyBinding(keys: [.character("r")], label: "r", action: .rescan, help: "rescan the selected host"),
        KeyBinding(keys: [.character("R")], label: "R", action: .rescanAll, help: "rescan every host"),
        KeyBinding(keys: [.character("m")], label: "m", action: .toggleMD5, help: "show MD5 fingerprints in details"),
        KeyBinding(keys: [.character("?")], label: "?", action: .help, help: "this help"),
        KeyBinding(keys: [.character("q")], label: "q", action: .quit, help: "quit (asks if a save is pending)"),
    ]

    static let byKey: [Key: DashboardAction] = {
        var table: [Key: DashboardAction] = [:]
        for binding in list { for key in binding.keys { table[key] = binding.action } }
        return table
    }()

    public static func action(for key: Key) -> DashboardAction? { byKey[key] }
}
