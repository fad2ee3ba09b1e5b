#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// OpenSSH `%` tokens in `HostName` (`%h`, `%%`) and `UserKnownHostsFile` (`%d %h %i %k %L %l %n %p
/// %r %u %%`), expanded the way `percent_expand` does for one alias.
enum SSHConfigTokens {
    static let knownHostsTokens: Set<Character> = ["%", "d", "h", "i", "k", "L", "l", "n", "p", "r", "u"]

    /// Reports an unknown token (OpenSSH refuses the whole configuration for one); true when all are known.
    static func check(_ text: String, allowed: Set<Character>, what: String, at location: SourceLocation,
                      log: inout DiagnosticLog) -> Bool {
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else { continue }
            guard let token = iterator.next(), allowed.contains(token) else {
                log.error(at: location, "\(what) \(InventoryDiagnostic.quote(text)) has an unknown or unsupported % token; ignored")
                return false
            }
        }
        return true
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
            "k": hostKeyAlias ?? alias,
            "L": String(local.prefix { $0 != "." }),
            "l": local,
            "n": alias,
            "p": String(port),
            "r": user ?? options.localUser,
            "u": options.localUser,
        ]
    }

    private static func localHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
