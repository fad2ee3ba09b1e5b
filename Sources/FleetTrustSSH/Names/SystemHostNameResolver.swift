import Foundation
import Glibc
import FleetTrustCore

/// The lookup `ssh` makes to canonicalize a host name (`resolve_host` with `AI_CANONNAME` and
/// `ai_family` from `AddressFamily`), through
/// the same system resolver (`getaddrinfo`: /etc/hosts, DNS, as nsswitch.conf says).
///
/// `getaddrinfo` blocks and cannot be interrupted, so each lookup is a `DetachedCall`, waited for
/// at most `timeout`. Answers are kept for the life of the resolver, since an inventory names the
/// same domains for many hosts.
public final class SystemHostNameResolver: HostNameResolving, @unchecked Sendable {
    private let timeout: Double
    private let lock = NSLock()
    private var answers: [String: HostNameLookup] = [:]

    public init(timeout: Double = 5) {
        self.timeout = timeout
    }

    public func canonicalLookup(_ name: String, port: Int, family: SSHAddressFamily) -> HostNameLookup {
        let key = "\(name) \(port) \(family.rawValue)"
        if let known = lock.withLock({ answers[key] }) { return known }
        guard let answer = DetachedCall.run(until: .now + .seconds(timeout), { Self.lookUp(name, port: port, family: family) }) else {
            return .unanswered("no answer within \(Int(timeout)) s")
        }
        lock.withLock { answers[key] = answer }
        return answer
    }

    private static func lookUp(_ name: String, port: Int, family: SSHAddressFamily) -> HostNameLookup {
        var hints = addrinfo()
        hints.ai_family = family.aiFamily
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_CANONNAME
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, String(port), &hints, &list)
        // `resolve_host` treats every failure (a missing name, a resolver that fails) as "not found".
        guard status == 0, let first = list else { return .notFound }
        defer { freeaddrinfo(list) }
        // `ssh` copies at most NI_MAXHOST bytes of the canonical name and ignores a longer one.
        let canonical = first.pointee.ai_canonname.map { String(cString: $0) }.flatMap { $0.utf8.count < Int(NI_MAXHOST) ? $0 : nil }
        return .found(canonicalName: canonical)
    }
}
