import CNcurses

/// Turns theme roles into curses attributes, once: a colour pair per role, mapped down to 8
/// colours (bright colours become bold, grey text dim) or to attributes only when colour is off or missing.
struct CursesPalette {
    private var attributes: [StyleRole: Int32] = [:]

    init(theme: Theme, noColor: Bool) {
        let useColor = !noColor && has_colors()
        var theme = theme
        if useColor {
            start_color()
            use_default_colors()
        } else {
            theme = theme.withoutColor
        }
        let colors = Int(ft_colors())
        for (n, role) in StyleRole.allCases.enumerated() {
            let style = theme.style(role)
            var value = CursesPalette.attributes(style.attributes)
            if useColor {
                let (fg, standIn) = CursesPalette.foreground(style.foreground, colors: colors)
                let bg = CursesPalette.background(style.background, colors: colors)
                init_pair(Int16(n + 1), Int16(fg), Int16(bg))
                value |= ft_color_pair(Int32(n + 1)) | CursesPalette.attributes(standIn.map { [$0] } ?? [])
            }
            attributes[role] = value
        }
    }

    func attribute(for role: StyleRole) -> Int32 { attributes[role] ?? 0 }

    static func attributes(_ set: Set<TextAttribute>) -> Int32 {
        var value: Int32 = 0
        if set.contains(.bold) { value |= ft_attr_bold() }
        if set.contains(.dim) { value |= ft_attr_dim() }
        if set.contains(.underline) { value |= ft_attr_underline() }
        if set.contains(.reverse) { value |= ft_attr_reverse() }
        return value
    }

    /// The colour number to ask curses for a foreground, and the attribute that stands in for what
    /// the terminal's colours cannot show: bold for brightness; on 8 colours, dim for grey (the
    /// nearest basic colour of a grey is black or white, unreadable on one background or the other).
    static func foreground(_ color: TerminalColor, colors: Int) -> (index: Int, standIn: TextAttribute?) {
        if colors < 16, color.isGrey { return (-1, .dim) }
        switch color {
        case .terminalDefault: return (-1, nil)
        case .indexed(let n) where n < colors: return (n, nil)
        case .indexed:
            let basic = color.basic ?? (7, false)
            return colors >= 16 ? (basic.index + (basic.bright ? 8 : 0), nil) : (basic.index, basic.bright ? .bold : nil)
        }
    }

    /// The colour number to ask curses for a background (brightness cannot be stood in for).
    static func background(_ color: TerminalColor, colors: Int) -> Int {
        switch color {
        case .terminalDefault: return -1
        case .indexed(let n) where n < colors: return n
        case .indexed:
            let basic = color.basic ?? (0, false)
            return colors >= 16 ? basic.index + (basic.bright ? 8 : 0) : basic.index
        }
    }
}
