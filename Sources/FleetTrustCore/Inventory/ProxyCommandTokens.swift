/// `%` tokens in a `ProxyCommand`, expanded as `ssh` expands them before running it through the
/// shell: `%h` the host name to connect to (`HostName`), `%p` the port, `%r` the remote user, `%n`
/// the name as given (the alias), `%%` a percent sign.
public enum ProxyCommandTokens {
    public struct UnknownToken: Error, CustomStringConvertible {
        public var token: String
        public var description: String { "ProxyCommand: unknown or unsupported token %\(token)" }
    }

    public static func expand(_ command: String, host: String, port: Int, user: String, name: String) throws(UnknownToken) -> String {
        var output = ""
        var iterator = command.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                output.append(character)
                continue
            }
            switch iterator.next() {
            case "h": output += host
            case "p": output += String(port)
            case "r": output += user
            case "n": output += name
            case "%": output += "%"
            case let other: throw UnknownToken(token: other.map(String.init) ?? "")
            }
        }
        return output
    }
}
