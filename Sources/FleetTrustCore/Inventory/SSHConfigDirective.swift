/// One `Keyword arguments` line of an ssh_config file, split as OpenSSH's `readconf.c` does.
///
/// The keyword ends at blanks or one `=` (so `Port=22`, `Port = 22` and `Port 22` are the same),
/// is case-insensitive, and the arguments are split like a shell with `#` starting a comment.
struct SSHConfigDirective {
    var keyword: String
    var arguments: [String]
    var location: SourceLocation
    /// The rest of the line as written: `ssh` takes a `ProxyCommand` this way, quotes and all,
    /// for the shell to read.
    var rawArguments = ""

    enum ParseError: Error {
        case noArgument(String)
        case invalidQuotes
    }

    /// `nil` for blank and comment lines.
    static func parse(_ text: Substring, location: SourceLocation) throws(ParseError) -> SSHConfigDirective? {
        let line = text.trimmingWhitespace()
        guard let first = line.first, first != "#" else { return nil }
        let keywordEnd = line.firstIndex(where: { $0 == " " || $0 == "\t" || $0 == "=" || $0 == "\u{0C}" }) ?? line.endIndex
        let keyword = line[..<keywordEnd]
        var rest = line[keywordEnd...]
        rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == "\u{0C}" })
        if rest.first == "=" { rest = rest.dropFirst() }
        rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == "\u{0C}" })
        guard !rest.isEmpty else { throw .noArgument(String(keyword)) }
        let arguments: [String]
        do {
            arguments = try InventoryLines.words(rest)
        } catch {
            throw .invalidQuotes
        }
        guard !arguments.isEmpty else { throw .noArgument(String(keyword)) }
        return SSHConfigDirective(keyword: keyword.lowercased(), arguments: arguments, location: location,
                                  rawArguments: String(rest))
    }
}

/// A condition on which the settings after a `Host` or `Match` line apply.
enum SSHConfigCondition {
    /// `Host` patterns: active when one positive pattern matches the alias and no `!` pattern does.
    case host([String])
    /// `Match` criteria, all of which must hold.
    case match([Criterion])
    /// A `Match` line fleettrust cannot read as `ssh` does: it may or may not apply, so a host whose other conditions hold is
    /// unjudged when the block sets anything.
    case unsupported(UnjudgedSetting)

    struct Criterion {
        enum Kind {
            case all
            /// `Match host`: the `HostName` obtained so far (with `%h` expanded), else the alias.
            case host(String)
            /// `Match originalhost`: the alias as typed.
            case originalHost(String)
            /// `Match user`: the remote user obtained so far, else the local one (case-sensitive).
            case user(String)
            /// `Match localuser`: the local user (case-sensitive).
            case localUser(String)
            /// `Match canonical`, `Match final`: hold only in the final pass (`final` asks for one).
            case canonical
            case final
            /// `Match exec`: the command as written, with the `Match` line (`SSHMatchExec`).
            case exec(String, SourceLocation)
            /// A criterion OpenSSH 9.2 does not know (`ssh` refuses it), as written, with the
            /// `Match` line.
            case unsupported(String, SourceLocation)
        }

        var kind: Kind
        var negated: Bool
    }

    /// Parses the arguments of a `Match` line, or says why it cannot be read.
    static func match(_ arguments: [String], at location: SourceLocation) -> Result<SSHConfigCondition, HostPattern.PatternError> {
        // ssh takes `exec` and the other one-argument criteria's next word as their argument.
        var criteria: [Criterion] = []
        var index = 0
        while index < arguments.count {
            var word = arguments[index].lowercased()
            let negated = word.hasPrefix("!")
            if negated { word.removeFirst() }
            index += 1
            switch word {
            case "all":
                criteria.append(Criterion(kind: .all, negated: negated))
            case "host", "originalhost":
                guard index < arguments.count else {
                    return .failure(.message("Match \(word) needs a pattern list"))
                }
                let list = arguments[index]
                index += 1
                criteria.append(Criterion(kind: word == "host" ? .host(list) : .originalHost(list), negated: negated))
            case "user", "localuser":
                guard index < arguments.count else {
                    return .failure(.message("Match \(word) needs a pattern list"))
                }
                let list = arguments[index]
                index += 1
                criteria.append(Criterion(kind: word == "user" ? .user(list) : .localUser(list), negated: negated))
            case "canonical", "final":
                criteria.append(Criterion(kind: word == "final" ? .final : .canonical, negated: negated))
            case "exec":
                guard index < arguments.count else { return .failure(.message("Match exec needs a command")) }
                let command = arguments[index]
                index += 1
                if let token = SSHConfigTokens.unknownToken(in: command, allowed: SSHMatchExec.tokens) {
                    return .failure(.message("Match exec \(InventoryDiagnostic.quote(command)): " + (token == "%"
                        ? "a % at the end, and ssh stops on it" : "unknown token %\(token), and ssh stops on it")))
                }
                criteria.append(Criterion(kind: .exec(command, location), negated: negated))
            default:
                guard index < arguments.count else { return .failure(.message("Match \(word) needs an argument")) }
                criteria.append(Criterion(kind: .unsupported(word + " " + arguments[index], location), negated: negated))
                index += 1
            }
        }
        if criteria.isEmpty { return .failure(.message("Match needs criteria")) }
        if criteria.count > 1, criteria.contains(where: { if case .all = $0.kind { return true } else { return false } }) {
            return .failure(.message("Match all cannot be combined with other criteria; fleettrust cannot tell whether this Match block applies"))
        }
        return .success(.match(criteria))
    }
}
