/// `KnownHostsCommand` as the user's own ssh configuration sets it for one host: `ssh` runs it and
/// reads what it prints as more known_hosts lines for the host, so fleettrust runs it too (before
/// judging, per presented key, as `ssh` does) and judges with those lines.
///
/// Only a command read from the user's configuration in this process is runnable: one an
/// inventory names never is (such a host is unchecked instead), and one decoded from a report
/// never is. The command line is split and expanded as OpenSSH 9.2's `load_hostkeys_command`
/// does it (`argv_split`, then `percent_dollar_expand` on every argument after the first), into
/// an argument vector: no shell ever reads it.
public struct KnownHostsCommand: Hashable, Sendable, Codable {
    /// The command line as written (the rest of the configuration line).
    public var template: String
    /// Where it was set.
    public var location: SourceLocation?
    /// The name `ssh` is given for the host: `%n`, and `%k` without `HostKeyAlias`.
    public var hostArgument: String
    /// Whether fleettrust may run it (see the type's comment); never true after decoding.
    public private(set) var isRunnable: Bool

    init(template: String, location: SourceLocation?, hostArgument: String) {
        self.template = template
        self.location = location
        self.hostArgument = hostArgument
        isRunnable = true
    }

    /// Why `ssh` calls it (`%I`): to order its host-key algorithms, for the host name, for the
    /// address (`CheckHostIP`).
    public enum Invocation: String, Hashable, Sendable, Codable {
        case order = "ORDER", hostName = "HOSTNAME", address = "ADDRESS"
    }

    enum CodingKeys: String, CodingKey {
        case template = "command", location, hostArgument = "host_argument"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        template = try c.decode(String.self, forKey: .template)
        location = try c.decodeIfPresent(String.self, forKey: .location).map(SourceLocation.init(reportText:))
        hostArgument = try c.decodeIfPresent(String.self, forKey: .hostArgument) ?? ""
        isRunnable = false
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(CleanText(template, limit: 1024).value, forKey: .template)
        try c.encodeIfPresent(location?.reportText, forKey: .location)
        try c.encode(CleanText(hostArgument, limit: 256).value, forKey: .hostArgument)
    }

    /// `argv_split(command, …, 0)`: words separated by spaces and tabs; `'` and `"` quote;
    /// a backslash escapes a quote, a backslash, or (outside quotes) a space; any other backslash
    /// is kept. Nil for an unterminated quote (`ssh`: "contains invalid quotes").
    static func split(_ text: String) -> [String]? {
        var words: [String] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x20 || bytes[index] == 0x09 {
                index += 1
                continue
            }
            var word: [UInt8] = []
            var quote: UInt8 = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\\") {
                    let next = index + 1 < bytes.count ? bytes[index + 1] : 0
                    if next == UInt8(ascii: "'") || next == UInt8(ascii: "\"") || next == UInt8(ascii: "\\") || (quote == 0 && next == 0x20) {
                        index += 1
                        word.append(next)
                    } else {
                        word.append(byte)
                    }
                } else if quote == 0 && (byte == 0x20 || byte == 0x09) {
                    break
                } else if quote == 0 && (byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")) {
                    quote = byte
                } else if quote != 0 && byte == quote {
                    quote = 0
                } else {
                    word.append(byte)
                }
                index += 1
            }
            if index >= bytes.count && quote != 0 { return nil }
            words.append(String(decoding: word, as: UTF8.self))
        }
        return words
    }

    /// The tokens `load_hostkeys_command` expands: the client's (`DEFAULT_CLIENT_PERCENT_EXPAND_ARGS`:
    /// `%C %L %i %k %l %n %p %d %h %r %u`) and its own (`%H %I %t %f %K`).
    static let tokens: Set<Character> = ["C", "L", "i", "k", "l", "n", "p", "d", "h", "r", "u", "H", "I", "t", "f", "K"]

    /// The argument vector for one run: the first word as written, every other word expanded
    /// (`${VAR}` from `environment`, then `%` tokens from `values`).
    static func arguments(_ words: [String], values: [Character: String],
                          environment: [String: String]) throws(SSHConfigTokens.ExpansionFailure) -> [String] {
        guard let first = words.first else { return [] }
        var result = [first]
        for word in words.dropFirst() {
            if let token = SSHConfigTokens.unknownToken(in: word, allowed: tokens.union(["%"])) {
                throw SSHConfigTokens.ExpansionFailure(text: token == "%" ? "a % at the end of an argument" : "unknown token %\(token)")
            }
            result.append(try SSHConfigTokens.dollarPercentExpanded(word, values, environment: environment))
        }
        return result
    }
}
