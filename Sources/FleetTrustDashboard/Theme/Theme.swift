import FleetTrustCore
import Foundation

/// A colour scheme as data: one `Style` per role, read from a small text file in `themes/`.
///
/// Format, one rule per line (`#` starts a comment):
/// `role = foreground, background[, attribute ...]` where a colour is `default`, one of the
/// eight ANSI names, `bright-<name>`, or a number 0-255, and attributes are `bold`, `dim`,
/// `underline`, `reverse`. Roles a file leaves out are drawn as `normal`.
public struct Theme: Sendable, Equatable {
    public var name: String
    public var styles: [StyleRole: Style]

    public init(name: String, styles: [StyleRole: Style]) {
        self.name = name
        self.styles = styles
    }

    public func style(_ role: StyleRole) -> Style {
        styles[role] ?? styles[.normal] ?? Style()
    }

    /// The same theme with colours removed, for `NO_COLOR` and terminals without colour:
    /// attributes stay, and roles that relied on colour get at least the monochrome theme's
    /// attributes (changed and revoked hosts in reverse video, not just bold like new ones).
    public var withoutColor: Theme {
        var result = Theme(name: name, styles: [:])
        for role in StyleRole.allCases {
            let attributes = style(role).attributes.union(Theme.monochromeAttributes[role] ?? [])
            result.styles[role] = Style(attributes: attributes)
        }
        return result
    }

    static let monochromeAttributes: [StyleRole: Set<TextAttribute>] = [
        .header: [.reverse], .columnHeader: [.underline], .selected: [.reverse], .marked: [.bold],
        .statusChanged: [.bold, .reverse], .statusRevoked: [.bold, .reverse], .statusPinMismatch: [.bold],
        .statusUnverified: [.bold, .reverse],
        .danger: [.bold], .dialogTitle: [.reverse], .statusLine: [.reverse], .statusKey: [.bold],
        .progressDone: [.reverse],
    ]
}

/// A theme file that cannot be used, with the file and line at fault.
public struct ThemeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String

    public var description: String {
        line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)"
    }
}

extension Theme {
    public static func parse(_ text: String, name: String, file: String) throws -> Theme {
        var styles: [StyleRole: Style] = [:]
        for (offset, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            func fail(_ message: String) -> ThemeError { ThemeError(file: file, line: offset + 1, message: message) }
            func quoted(_ word: some StringProtocol) -> String { "'\(Sanitizer.clean(String(word), limit: 64))'" }
            let sides = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard sides.count == 2 else { throw fail("expected `role = foreground, background[, attributes]`") }
            guard let role = StyleRole(rawValue: sides[0]) else {
                throw fail("unknown role \(quoted(sides[0])) (known: \(StyleRole.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            if styles[role] != nil { throw fail("role '\(role.rawValue)' is defined twice") }
            let fields = sides[1].split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
            guard fields.count >= 2 else { throw fail("'\(role.rawValue)' needs a foreground and a background colour") }
            guard let foreground = parseColor(fields[0]) else { throw fail("unknown colour \(quoted(fields[0]))") }
            guard let background = parseColor(fields[1]) else { throw fail("unknown colour \(quoted(fields[1]))") }
            var attributes = Set<TextAttribute>()
            for word in fields.dropFirst(2) {
                guard let attribute = TextAttribute(rawValue: word) else { throw fail("unknown attribute \(quoted(word))") }
                attributes.insert(attribute)
            }
            styles[role] = Style(foreground: foreground, background: background, attributes: attributes)
        }
        return Theme(name: name, styles: styles)
    }

    static func parseColor(_ word: String) -> TerminalColor? {
        if word == "default" { return .terminalDefault }
        if let n = Int(word), (0...255).contains(n) { return .indexed(n) }
        if let n = TerminalColor.names.firstIndex(of: word) { return .indexed(n) }
        if word.hasPrefix("bright-"), let n = TerminalColor.names.firstIndex(of: String(word.dropFirst(7))) {
            return .indexed(n + 8)
        }
        return nil
    }

    /// Finds a theme by path (anything with a `/` or ending in `.theme`) or by name in the
    /// theme directories, and parses it.
    public static func load(_ nameOrPath: String, searching directories: [String]) throws -> Theme {
        let isPath = nameOrPath.contains("/") || nameOrPath.hasSuffix(".theme")
        var seen = Set<String>()
        let candidates = isPath ? [nameOrPath] : directories.filter { seen.insert($0).inserted }.map { "\($0)/\(nameOrPath).theme" }
        guard let path = candidates.first(where: { !InputFile.isMissing($0) }) else {
            guard !isPath else { throw ThemeError(file: nameOrPath, line: 0, message: "no such theme file") }
            let available = Set(directories.flatMap { directory in
                ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                    .filter { $0.hasSuffix(".theme") }.map { String($0.dropLast(".theme".count)) }
            }).sorted()
            throw ThemeError(file: nameOrPath, line: 0, message: available.isEmpty
                ? "theme not found, and no theme is installed (looked for \(candidates.joined(separator: ", ")))"
                : "theme not found (looked for " + candidates.filter { FileManager.default.fileExists(atPath: URL(fileURLWithPath: $0).deletingLastPathComponent().path) }
                    .joined(separator: ", ") + "); the themes are \(available.joined(separator: ", ")) (or give the path of a .theme file)")
        }
        let data: [UInt8]
        do {
            data = try InputFile.read(path, role: "theme file", limit: 1 << 20)
        } catch {
            throw ThemeError(file: path, line: 0, message: error.problem)
        }
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return try parse(String(decoding: data, as: UTF8.self), name: name, file: path)
    }

    /// Where themes live: `$FLEETTRUST_THEMES`, where `make install` put them beside the executable
    /// (`PREFIX/bin`, `PREFIX/share/fleettrust/themes`), a `themes/` folder next to or above the
    /// executable (a source checkout), and the usual installed locations.
    public static func searchDirectories(executable: String, environment: [String: String]) -> [String] {
        var result: [String] = []
        if let custom = environment["FLEETTRUST_THEMES"] { result.append(custom) }
        var directory = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        result.append(directory.deletingLastPathComponent().appendingPathComponent("share/fleettrust/themes").path)
        for _ in 0..<6 {
            result.append(directory.appendingPathComponent("themes").path)
            directory.deleteLastPathComponent()
        }
        result.append("/usr/local/share/fleettrust/themes")
        result.append("/usr/share/fleettrust/themes")
        var seen = Set<String>()
        return result.filter { seen.insert($0).inserted }
    }
}
