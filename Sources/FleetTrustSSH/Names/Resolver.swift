import Foundation
import Glibc
import FleetTrustCore

/// A resolved socket address as plain bytes, so it can cross threads.
struct SocketAddress: Sendable, Hashable {
    var bytes: [UInt8]
    var family: Int32
    /// The numeric form (`192.0.2.1`, `2001:db8::1`), for messages and libssh's host option.
    var numeric: String

    init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(length)))
        family = Int32(address.pointee.sa_family)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
        numeric = status == 0 ? String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        bytes.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
    }
}

/// Turns a host name into addresses without letting a stuck resolver hold a probe past its timeout.
///
/// `getaddrinfo` blocks and cannot be interrupted. Numeric addresses are parsed in place; names
/// are resolved through `DetachedCall`, which the probe stops waiting for when the deadline passes
/// or the probe is cancelled. Both ask for the host's `AddressFamily` only, as `ssh`'s
/// `resolve_host` does: an address of the other family fails as in `ssh` ("Address family for
/// hostname not supported").
enum Resolver {
    static let maximumAddresses = 4

    static func resolve(_ host: String, port: Int, family: SSHAddressFamily = .any, deadline: ContinuousClock.Instant,
                        cancellation: ProbeCancellation) -> Result<[SocketAddress], ProbeFailure> {
        cancellation.enter(.resolve)
        if case .success(let numeric) = lookup(host, port: port, family: family, numericOnly: true) { return .success(numeric) }
        if let result = DetachedCall.run(until: deadline, isCancelled: { cancellation.isCancelled }, {
            Resolver.lookup(host, port: port, family: family, numericOnly: false)
        }) {
            return result
        }
        if cancellation.isCancelled { return .failure(ProbeFailures.cancelled) }
        return .failure(ProbeFailure(stage: .resolve, code: .resolveFailed,
                                     message: "name lookup did not finish within the timeout"))
    }

    private static func lookup(_ host: String, port: Int, family: SSHAddressFamily,
                               numericOnly: Bool) -> Result<[SocketAddress], ProbeFailure> {
        var hints = addrinfo()
        hints.ai_family = family.aiFamily
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (numericOnly ? AI_NUMERICHOST : AI_ADDRCONFIG)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let why = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(ProbeFailure(stage: .resolve, code: .resolveFailed, message: "cannot resolve the name: \(why)"))
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry, addresses.count < maximumAddresses {
            if let address = current.pointee.ai_addr {
                let resolved = SocketAddress(address, length: current.pointee.ai_addrlen)
                if !addresses.contains(resolved) { addresses.append(resolved) }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(ProbeFailure(stage: .resolve, code: .resolveFailed, message: "the name has no addresses"))
        }
        return .success(addresses)
    }
}

extension SSHAddressFamily {
    /// `getaddrinfo`'s `ai_family` for the keyword's value.
    var aiFamily: Int32 {
        switch self {
        case .any: return AF_UNSPEC
        case .inet: return AF_INET
        case .inet6: return AF_INET6
        }
    }
}

extension Duration {
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}

extension Duration {
    var milliseconds: Double { seconds * 1000 }
}
