/// One `ProxyJump` hop: `[user@]host[:port]`, `[user@][host]:port`, or `ssh://[user@]host[:port]`,
/// parsed as `ssh` parses it (`parse_user_host_port`, `parse_ssh_uri` in OpenSSH's misc.c).
///
/// Its host and user are checked as `ssh` checks a `-J` given on its command line
/// (`ssh_valid_hostname`, `ssh_valid_ruser`), because fleettrust hands them to `ssh` and the
/// inventory they come from is untrusted: a hop that is not a valid `SSHHostName` cannot exist.
public struct JumpHost: Hashable, Sendable, Codable, CustomStringConvertible {
    public let hostName: SSHHostName
    public let userName: SSHUserName?
    public let port: Int?

    public var host: String { hostName.value }
    public var user: String? { userName?.value }

    public init(user: String? = nil, host: String, port: Int? = nil) throws(JumpHost.Problem) {
        guard !host.isEmpty else { throw .emptyHost }
        if let user, user.isEmpty { throw .emptyUser }
        if let port, !(1...65535).contains(port) { throw .badPort(String(port)) }
        do {
            hostName = try SSHHostName(host)
            userName = try user.map { text throws(SSHNameError) in try SSHUserName(text) }
        } catch {
            throw .unsafeName(error)
        }
        self.port = port
    }

    /// Parses one hop as written; throws for text `ssh` refuses.
    public init(_ text: String) throws(JumpHost.Problem) {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        if rest.hasPrefix("ssh://") {
            rest = rest.dropFirst(6)
            if rest.last == "/" { rest = rest.dropLast() }
        }
        var user: String?
        if let at = rest.lastIndex(of: "@") {
            user = String(rest[..<at])
            rest = rest[rest.index(after: at)...]
        }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .unclosedBracket(String(rest)) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let tail = rest[rest.index(after: close)...]
            if tail.hasPrefix(":") {
                portText = tail.dropFirst()
            } else if !tail.isEmpty {
                throw .trailingText(String(tail))
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        var port: Int?
        if let portText, !portText.isEmpty {
            guard portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber), let value = Int(portText),
                  (1...65535).contains(value) else { throw .badPort(String(portText)) }
            port = value
        }
        try self.init(user: user, host: String(host), port: port)
    }

    public var description: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return (user.map { "\($0)@" } ?? "") + name + (port.map { ":\($0)" } ?? "")
    }

    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Why one hop does not parse.
    public enum Problem: Error, Hashable, Sendable, CustomStringConvertible {
        case emptyHost
        case emptyUser
        case badPort(String)
        case unclosedBracket(String)
        case trailingText(String)
        case unsafeName(SSHNameError)

        public var description: String {
            switch self {
            case .emptyHost: return "a hop has no host"
            case .emptyUser: return "a hop has an empty user before '@'"
            case .badPort(let text): return "port \"\(Sanitizer.clean(text, limit: 20))\" is not a number from 1 to 65535"
            case .unclosedBracket(let text): return "\"\(Sanitizer.clean(text, limit: 80))\" opens '[' without closing it"
            case .trailingText(let text): return "\"\(Sanitizer.clean(text, limit: 40))\" follows the closing ']'"
            case .unsafeName(let error): return "its \(error.description)"
            }
        }
    }
}
