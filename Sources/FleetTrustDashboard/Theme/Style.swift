import FleetTrustCore

/// What a piece of the screen means, not how it looks: the view speaks only in roles, and a
/// theme (a data file, as htop's colour-scheme tables) decides colours and attributes.
public enum StyleRole: String, Sendable, CaseIterable {
    case normal
    case header
    case headerLabel = "header-label"
    case progressDone = "progress-done"
    case progressTodo = "progress-todo"
    case columnHeader = "column-header"
    case selected
    case marked
    case statusPending = "status-pending"
    case statusTrusted = "status-trusted"
    case statusNew = "status-new"
    case statusChanged = "status-changed"
    case statusRevoked = "status-revoked"
    case statusPinMismatch = "status-pin-mismatch"
    case statusUnreachable = "status-unreachable"
    case statusError = "status-error"
    case statusUnverified = "status-unverified"
    case fingerprint
    case dim
    case warning
    case danger
    case dialog
    case dialogTitle = "dialog-title"
    case statusLine = "status-line"
    case statusKey = "status-key"
    case filter

    public static func status(_ status: HostStatus) -> StyleRole {
        switch status {
        case .pending: return .statusPending
        case .trusted: return .statusTrusted
        case .new: return .statusNew
        case .changed: return .statusChanged
        case .revoked: return .statusRevoked
        case .pinMismatch: return .statusPinMismatch
        case .invalidCertificate: return .statusPinMismatch
        case .unpinned: return .statusNew
        case .unchecked: return .statusError
        case .unreachable: return .statusUnreachable
        case .error: return .statusError
        case .untrusted: return .statusNew
        case .expired: return .statusError
        case .nameMismatch: return .statusPinMismatch
        case .splitView: return .statusChanged
        case .unverified: return .statusUnverified
        }
    }
}

/// A terminal colour: the terminal's own default, one of the 16 ANSI colours, or a 256-colour index.
public enum TerminalColor: Hashable, Sendable {
    case terminalDefault
    case indexed(Int)

    static let names = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    /// The nearest of the 8 basic colours, and whether it was a bright one (drawn bold instead).
    /// Dark colours keep their hue (the darkest green is still green), greys their lightness.
    public var basic: (index: Int, bright: Bool)? {
        switch self {
        case .terminalDefault: return nil
        case .indexed(let n) where n < 16: return (n % 8, n >= 8)
        case .indexed(let n) where n >= 232: return n >= 244 ? (7, n >= 250) : (0, true)
        case .indexed(let n):
            let c = n - 16, r = c / 36, g = (c / 6) % 6, b = c % 6
            let top = max(r, g, b)
            if r == g && g == b { return top >= 3 ? (7, top == 5) : (0, top == 2) }
            let on = min(top, 3)
            let index = (r >= on ? 1 : 0) | (g >= on ? 2 : 0) | (b >= on ? 4 : 0)
            return (index, top >= 5)
        }
    }

    /// Greys, which 8-colour terminals can only show as black or white: foregrounds in them are
    /// drawn dim in the terminal's own colour instead, readable on dark and light backgrounds alike.
    public var isGrey: Bool {
        switch self {
        case .terminalDefault: return false
        case .indexed(let n) where n < 16: return n == 8
        case .indexed(let n) where n >= 232: return n < 250
        case .indexed(let n):
            let c = n - 16, r = c / 36, g = (c / 6) % 6, b = c % 6
            return r == g && g == b && (1...3).contains(r)
        }
    }
}

/// Text attributes a theme may ask for.
public enum TextAttribute: String, Hashable, Sendable, CaseIterable {
    case bold, dim, underline, reverse
}

/// How one role is drawn.
public struct Style: Hashable, Sendable {
    public var foreground: TerminalColor
    public var background: TerminalColor
    public var attributes: Set<TextAttribute>

    public init(foreground: TerminalColor = .terminalDefault, background: TerminalColor = .terminalDefault,
                attributes: Set<TextAttribute> = []) {
        self.foreground = foreground
        self.background = background
        self.attributes = attributes
    }
}
