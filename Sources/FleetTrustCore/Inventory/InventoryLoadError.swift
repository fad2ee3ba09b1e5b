/// Why an inventory path given on the command line could not be read at all.
///
/// Unlike `InventoryDiagnostic` (a problem inside a file that was read), each of these ends the
/// command: there is nothing sound to check. Each prints as one sentence naming the path, never
/// as a Foundation error domain.
public enum InventoryLoadError: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(path: String)
    /// `reason` is `strerror`'s text for the failing call.
    case unreadable(path: String, reason: String)
    /// A directory with no file Ansible would read as an inventory.
    case noInventoryFiles(path: String)
    case binary(path: String)
    case tooLarge(path: String, limit: Int)
    /// `--inventory-format` names a format that is not Ansible's for an inventory directory.
    case formatNotForDirectory(path: String, format: InventoryFormat)
    /// A file that starts with `#!` but lacks the execute bit, so it is neither run nor read.
    case scriptNotExecutable(path: String)
    case scriptNotStarted(path: String, reason: String)
    case scriptFailed(path: String, arguments: [String], status: Int32, errorOutput: String)
    case scriptKilled(path: String, arguments: [String], signal: Int32, errorOutput: String)
    case scriptTimedOut(path: String, arguments: [String], seconds: Double)
    case scriptOutputTooLarge(path: String, arguments: [String], limit: Int)
    case scriptOutputNotJSON(path: String, arguments: [String], start: String)
    /// Security settings that do not parse (a mistyped `fleettrust_policy`): the run is refused.
    case securitySettingsRefused([InventoryDiagnostic])
    /// `--group` names no group of the inventory (a typo, most often): `known` are the groups there are.
    case unknownGroups([String], known: [String])

    /// For the errors about reading a path: what is wrong with it, without the path (for
    /// messages that already name it, such as a diagnostic about one file of a directory).
    var problem: String? {
        switch self {
        case .missing: return "no such file or directory"
        case .unreadable(_, let reason): return "cannot read it: \(reason)"
        case .binary: return "binary data, not an inventory"
        case .tooLarge(_, let limit): return "larger than \(Self.size(limit)), the most fleettrust reads as an inventory"
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .missing(let path):
            return "\(Self.clean(path)): no such file or directory"
        case .unreadable(let path, let reason):
            return "\(Self.clean(path)): cannot read the inventory: \(reason)"
        case .noInventoryFiles(let path):
            return "\(Self.clean(path)): this directory holds no inventory file (as Ansible does, fleettrust skips hidden names, group_vars, host_vars and names ending in \(AnsibleInventoryDirectory.ignoredEndings.joined(separator: " ")))"
        case .binary(let path):
            return "\(Self.clean(path)): this is binary data, not an inventory"
        case .tooLarge(let path, let limit):
            return "\(Self.clean(path)): larger than \(Self.size(limit)), the most fleettrust reads as an inventory"
        case .formatNotForDirectory(let path, let format):
            return "\(Self.clean(path)): an inventory directory holds Ansible inventories; --inventory-format \(format.rawValue) cannot read it"
        case .scriptNotExecutable(let path):
            return "\(Self.clean(path)): this is a script (it starts with #!) without the execute bit; make it executable to use it as a dynamic inventory"
        case .scriptNotStarted(let path, let reason):
            return "inventory script \(Self.clean(path)) could not be started: \(Sanitizer.clean(reason, limit: 200))"
        case .scriptFailed(let path, let arguments, let status, let errorOutput):
            return "inventory script \(Self.command(path, arguments)) failed with exit status \(status)" + Self.said(errorOutput)
        case .scriptKilled(let path, let arguments, let signal, let errorOutput):
            return "inventory script \(Self.command(path, arguments)) was killed by signal \(signal)" + Self.said(errorOutput)
        case .scriptTimedOut(let path, let arguments, let seconds):
            return "inventory script \(Self.command(path, arguments)) did not finish within \(Self.seconds(seconds)) second\(seconds == 1 ? "" : "s") and was stopped"
        case .scriptOutputTooLarge(let path, let arguments, let limit):
            return "inventory script \(Self.command(path, arguments)) printed more than \(Self.size(limit)) and was stopped"
        case .scriptOutputNotJSON(let path, let arguments, let start):
            return "inventory script \(Self.command(path, arguments)) printed no JSON object"
                + (start.isEmpty ? " (its output is empty)" : " (its output begins \(InventoryDiagnostic.quote(start)))")
        case .securitySettingsRefused(let refusals):
            return refusals.map(\.description).joined(separator: "\n")
        case .unknownGroups(let groups, let known):
            let asked = groups.map { Sanitizer.clean($0, limit: 80) }.joined(separator: ", ")
            let there = known.isEmpty ? "the inventory has no groups"
                : "its groups are " + known.prefix(40).map { Sanitizer.clean($0, limit: 80) }.joined(separator: ", ")
                    + (known.count > 40 ? " and \(known.count - 40) more" : "")
            return "no such group in the inventory: \(asked); \(there)"
        }
    }

    private static func clean(_ path: String) -> String {
        Sanitizer.clean(path, limit: 400)
    }

    private static func command(_ path: String, _ arguments: [String]) -> String {
        ([clean(path)] + arguments.map { Sanitizer.clean($0, limit: 80) }).joined(separator: " ")
    }

    /// The script's own error output, after the sentence, on the same line (the command line
    /// prints one line per problem): its last lines, sanitized, separated by ` / `.
    private static func said(_ errorOutput: String) -> String {
        let lines = errorOutput.split(whereSeparator: \.isNewline).map { Sanitizer.clean(String($0), limit: 300) }
            .filter { !$0.trimmingWhitespace().isEmpty }
        guard !lines.isEmpty else { return " and wrote nothing on standard error" }
        let shown = lines.suffix(8)
        return "; it wrote on standard error: " + (lines.count > shown.count ? "… / " : "") + shown.joined(separator: " / ")
    }

    private static func size(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
