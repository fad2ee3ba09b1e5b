/// `%` tokens in a `ProxyCommand`, expanded as `ssh` expands them before running it through the
/// shell: `%h` the host name to connect to (`HostName`, lower-cased, or an address in its
/// canonical form, as ssh.c makes it), `%p` the port, `%r` the remote user, `%n` the name as
/// given (the alias), `%%` a percent sign.
///
/// The values are checked names (`SSHDestination`, `SSHUserName`), never raw inventory text: as
/// for `ssh`, nothing a shell reads as syntax (`$(…)`, a backquote, `;`, `|`, `&`, a newline) can
/// reach the command through a token.
public enum ProxyCommandTokens {
    public struct UnknownToken: Error, CustomStringConvertible {
        public var token: String
        public var description: String { "ProxyCommand: unknown or unsupported token %\(token)" }
    }

    public static func expand(_ command: String, destination: SSHDestination, port: Int,
                              user: SSHUserName) throws(UnknownToken) -> String {
        var output = ""
        var iterator = command.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                output.append(character)
                continue
            }
            switch iterator.next() {
            case "h": output += LookupName.canonicalHost(destination.hostName.value)
            case "p": output += String(port)
            case "r": output += user.value
            case "n": output += destination.alias.value
            case "%": output += "%"
            case let other: throw UnknownToken(token: other.map(String.init) ?? "")
            }
        }
        return output
    }
}
