/// What the terminal should show, as a pure value: lines of styled text spans.
///
/// `DashboardView` builds it from the state; the curses layer only copies it to the terminal.
/// Tests read it as text (`Screen.text`) or check the role of what they find.
public struct Screen: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var lines: [ScreenLine]
    /// Where the terminal cursor should rest (the filter prompt), if visible.
    public var cursor: (row: Int, column: Int)?

    public init(width: Int, height: Int, lines: [ScreenLine] = [], cursor: (row: Int, column: Int)? = nil) {
        self.width = width
        self.height = height
        self.lines = lines
        self.cursor = cursor
    }

    public static func == (a: Screen, b: Screen) -> Bool {
        a.width == b.width && a.height == b.height && a.lines == b.lines
            && a.cursor?.row == b.cursor?.row && a.cursor?.column == b.cursor?.column
    }

    public var text: String { lines.map(\.text).joined(separator: "\n") }

    /// The role drawn under the first occurrence of `needle`, for tests.
    public func role(of needle: String) -> StyleRole? {
        for line in lines {
            for span in line.spans where span.text.contains(needle) { return span.role }
        }
        return nil
    }
}

public struct Span: Equatable, Sendable {
    public var text: String
    public var role: StyleRole

    public init(_ text: String, _ role: StyleRole = .normal) {
        self.text = text
        self.role = role
    }
}

/// One terminal row. `fill` is the role for the rest of the row after the spans.
public struct ScreenLine: Equatable, Sendable {
    public var spans: [Span]
    public var fill: StyleRole

    public init(_ spans: [Span] = [], fill: StyleRole = .normal) {
        self.spans = spans
        self.fill = fill
    }

    public init(_ text: String, _ role: StyleRole = .normal) {
        self.init([Span(text, role)], fill: role)
    }

    public var text: String { spans.map(\.text).joined() }
    public var width: Int { spans.reduce(0) { $0 + DisplayWidth.of($1.text) } }

    public mutating func append(_ text: String, _ role: StyleRole = .normal) {
        spans.append(Span(text, role))
    }

    /// Cut to `width` columns, so the curses layer never wraps.
    public func clipped(to width: Int) -> ScreenLine {
        var remaining = width
        var result = ScreenLine(fill: fill)
        for span in spans {
            guard remaining > 0 else { break }
            let w = DisplayWidth.of(span.text)
            if w <= remaining {
                result.spans.append(span)
                remaining -= w
            } else {
                result.spans.append(Span(DisplayWidth.truncate(span.text, to: remaining), span.role))
                remaining = 0
            }
        }
        return result
    }
}
