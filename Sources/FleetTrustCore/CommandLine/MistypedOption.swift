import Foundation

/// A mistyped option is named before anything else is said: swift-argument-parser runs a
/// command's `validate()` before it reports unknown options, so `scan --invntory x` would otherwise
/// be told to give an inventory.
public enum MistypedOption {
    /// "Unknown option '--invntory'. Did you mean '--inventory'?" for the first `--word` in
    /// `arguments` that the command they select does not declare; nil when every one is known.
    /// `helpDump` is swift-argument-parser's JSON description of the root command (`_dumpHelp()`).
    public static func problem(in arguments: [String], helpDump: Data) -> String? {
        guard let tool = try? JSONDecoder().decode(Tool.self, from: helpDump) else { return nil }
        var command = tool.command
        if let word = arguments.first, let sub = command.subcommands?.first(where: { $0.commandName == word }) {
            command = sub
        } else if let name = command.defaultSubcommand, let sub = command.subcommands?.first(where: { $0.commandName == name }) {
            command = sub
        }
        let known = Set((command.arguments ?? []).flatMap { $0.names ?? [] }.filter { $0.kind != "short" }.map(\.name)
                        + ["help", "version"])
        for argument in arguments {
            if argument == "--" { break }
            guard argument.hasPrefix("--"), argument.count > 2 else { continue }
            let name = String(argument.dropFirst(2).prefix { $0 != "=" })
            guard !known.contains(name) else { continue }
            let shown = Sanitizer.clean("--" + name, limit: 64)
            let closest = known.min { distance($0, name) < distance($1, name) }
            if let closest, distance(closest, name) <= max(2, name.count / 3) {
                return "Unknown option '\(shown)'. Did you mean '--\(closest)'?"
            }
            return "Unknown option '\(shown)'"
        }
        return nil
    }

    /// Levenshtein distance, bounded by the short option names it compares.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8.prefix(64)), b = Array(b.utf8.prefix(64))
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    private struct Tool: Decodable { var command: Command }
    private struct Command: Decodable {
        var commandName: String
        var defaultSubcommand: String?
        var subcommands: [Command]?
        var arguments: [Argument]?
    }
    private struct Argument: Decodable { var names: [Name]? }
    private struct Name: Decodable {
        var kind: String
        var name: String
    }
}
