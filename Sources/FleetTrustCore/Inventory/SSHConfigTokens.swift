import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// OpenSSH `%` tokens in `HostName` (`%h`, `%%`) and `UserKnownHostsFile` (`%d %h %i %k %L %l %n %p
/// %r %u %%`), and the `~` and `${VAR}` expansions of file names, done the way `misc.c`
/// (`percent_expand`, `percent_dollar_expand`, `tilde_expand`) does them for one host.
enum SSHConfigTokens {
    static let knownHostsTokens: Set<Character> = ["%", "d", "h", "i", "k", "L", "l", "n", "p", "r", "u"]

    /// The first `%` token not in `allowed` (a `%` at the end gives `%`'s own place as nil
    /// token: reported as `%`); nil when all are known. OpenSSH refuses the configuration for one.
    static func unknownToken(in text: String, allowed: Set<Character>) -> Character? {
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else { continue }
            guard let token = iterator.next() else { return "%" }
            if !allowed.contains(token) { return token }
        }
        return nil
    }

    static func expand(_ text: String, _ values: [Character: String]) -> String {
        var result = ""
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                result.append(character)
                continue
            }
            guard let token = iterator.next() else { break }
            result += token == "%" ? "%" : values[token] ?? "%\(token)"
        }
        return result
    }

    /// Values for `UserKnownHostsFile` tokens, for one resolved host.
    static func knownHostsValues(alias: String, hostName: String, port: Int, user: String?,
                                 hostKeyAlias: String?, options: InventoryReadOptions) -> [Character: String] {
        let local = localHostName()
        return [
            "d": options.homeDirectory,
            "h": hostName,
            "i": String(getuid()),
            "k": hostKeyAlias?.lowercased() ?? alias,
            "L": String(local.prefix { $0 != "." }),
            "l": local,
            "n": alias,
            "p": String(port),
            "r": user ?? options.localUser,
            "u": options.localUser,
        ]
    }

    /// `DEFAULT_CLIENT_PERCENT_EXPAND_ARGS` (`%C %L %i %k %l %n %p %d %h %r %u`), the tokens of a
    /// command `ssh` runs for a connection (`KnownHostsCommand`, `Match exec`), from values already
    /// checked by the caller. `%C` is `ssh_connection_hash`: SHA-1 of this host's name, the remote
    /// host, the port and the remote user, in hex.
    static func clientValues(remoteHost: String, port: Int, remoteUser: String, originalHost: String, keyAlias: String,
                             home: String, localUser: String) -> [Character: String] {
        let thisHost = localHostName()
        let hash = Digest.sha1(Array((thisHost + remoteHost + String(port) + remoteUser).utf8))
        return [
            "C": hash.map { String(format: "%02x", $0) }.joined(),
            "L": String(thisHost.prefix { $0 != "." }),
            "i": String(getuid()),
            "k": keyAlias,
            "l": thisHost,
            "n": originalHost,
            "p": String(port),
            "d": home,
            "h": remoteHost,
            "r": remoteUser,
            "u": localUser,
        ]
    }

    /// Why an expansion fails: `ssh` stops with "invalid environment variable expansion".
    struct ExpansionFailure: Error {
        var text: String
    }

    /// `tilde_expand`: `~`, `~/path`, `~user/path` become the home directory (with one `/`);
    /// other paths are unchanged.
    static func tildeExpanded(_ path: String, home: String) throws(ExpansionFailure) -> String {
        guard path.hasPrefix("~") else { return path }
        let rest = path.dropFirst()
        let user = rest.prefix { $0 != "/" }
        let tail = rest.dropFirst(user.count).drop { $0 == "/" }
        var directory = home
        if !user.isEmpty {
            guard let entry = getpwnam(String(user)) else { throw ExpansionFailure(text: "~\(user): no such user") }
            directory = String(cString: entry.pointee.pw_dir)
        }
        return (directory.hasSuffix("/") ? directory : directory + "/") + tail
    }

    /// `percent_dollar_expand`: one pass over the text, `${NAME}` from the environment and `%x`
    /// from `values`; an unset variable or an unclosed `${` fails, as in `ssh`.
    static func dollarPercentExpanded(_ text: String, _ values: [Character: String],
                                      environment: [String: String]) throws(ExpansionFailure) -> String {
        var result = ""
        var rest = Substring(text)
        while let character = rest.first {
            if character == "$", rest.dropFirst().first == "{" {
                let body = rest.dropFirst(2)
                guard let end = body.firstIndex(of: "}") else { throw ExpansionFailure(text: "${ without a closing }") }
                let name = String(body[..<end])
                guard !name.isEmpty else { throw ExpansionFailure(text: "an empty ${} variable") }
                guard let value = environment[name] else { throw ExpansionFailure(text: "${\(name)} is not set") }
                result += value
                rest = body[body.index(after: end)...]
                continue
            }
            rest = rest.dropFirst()
            guard character == "%", let token = rest.first else {
                result.append(character)
                continue
            }
            rest = rest.dropFirst()
            result += token == "%" ? "%" : values[token] ?? "%\(token)"
        }
        return result
    }

    static func localHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
