#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How inventories write a host and its port, and Ansible's host ranges (`web[01:20].example.com`).
///
/// Shared by the plain-list and Ansible readers, which accept the same spellings: `host`,
/// `host:port`, `[host]:port`, `[v6addr]:port` and a bare IPv6 literal.
enum HostPattern {
    struct Endpoint {
        var host: String
        var port: Int?
    }

    /// Splits `host[:port]`. Colons inside range brackets (`web[1:3]`) are not port separators.
    static func endpoint<S: StringProtocol>(_ text: S) -> Result<Endpoint, PatternError> {
        let text = String(text)
        if text.isEmpty { return .failure(.message("empty host name")) }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let inner = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            let bracketsEndpoint = rest.isEmpty || rest.hasPrefix(":") && !rest.contains("[")
            if bracketsEndpoint && (isIPv6(inner) || !isRange(inner)) {
                if inner.isEmpty { return .failure(.message("empty host name in brackets")) }
                if rest.isEmpty { return .success(Endpoint(host: String(inner), port: nil)) }
                return port(rest.dropFirst()).map { Endpoint(host: String(inner), port: $0) }
            }
        }
        let colons = topLevelColons(text)
        switch colons.count {
        case 0:
            return .success(Endpoint(host: text, port: nil))
        case 1:
            let host = text[..<colons[0]]
            if host.isEmpty { return .failure(.message("empty host name before ':'")) }
            return port(text[text.index(after: colons[0])...]).map { Endpoint(host: String(host), port: $0) }
        default:
            guard isIPv6(text) else {
                return .failure(.message("\(InventoryDiagnostic.quote(text)) is neither host:port nor an IPv6 address; write [host]:port"))
            }
            return .success(Endpoint(host: text, port: nil))
        }
    }

    static func port<S: StringProtocol>(_ text: S) -> Result<Int, PatternError> {
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let value = Int(text), (1...65535).contains(value) else {
            return .failure(.message("port \(InventoryDiagnostic.quote(text)) is not a number from 1 to 65535"))
        }
        return .success(value)
    }

    static func isIPv6<S: StringProtocol>(_ text: S) -> Bool {
        var storage = in6_addr()
        return String(text).withCString { inet_pton(AF_INET6, $0, &storage) } == 1
    }

    private static func isRange<S: StringProtocol>(_ inner: S) -> Bool {
        let parts = inner.split(separator: ":", omittingEmptySubsequences: false)
        return (2...3).contains(parts.count) && parts.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber } }
    }

    private static func topLevelColons(_ text: String) -> [String.Index] {
        var depth = 0
        var result: [String.Index] = []
        for index in text.indices {
            switch text[index] {
            case "[": depth += 1
            case "]": depth = max(0, depth - 1)
            case ":" where depth == 0: result.append(index)
            default: break
            }
        }
        return result
    }

    enum PatternError: Error {
        case message(String)

        var text: String {
            switch self {
            case .message(let text): return text
            }
        }
    }
}
