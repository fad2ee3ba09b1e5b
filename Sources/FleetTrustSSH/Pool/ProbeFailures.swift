import Glibc
import FleetTrustCore

/// Maps what the socket layer and libssh report into `ProbeFailure`s with stable codes.
///
/// libssh reports most errors as free text; the stage comes from what we observed ourselves
/// (connected? did the server send its identification?) and the code from the text.
enum ProbeFailures {
    static let cancelled = ProbeFailure(stage: .cancelled, code: .cancelled, message: "the probe was cancelled")

    static func connect(errno code: Int32) -> ProbeFailure {
        let why = String(cString: strerror(code))
        switch code {
        case ECONNREFUSED:
            return ProbeFailure(stage: .connect, code: .connectionRefused, message: "connection refused")
        case ETIMEDOUT:
            return connectTimeout
        case EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL, EAFNOSUPPORT:
            return ProbeFailure(stage: .connect, code: .hostUnreachable, message: "host unreachable: \(why)")
        default:
            return ProbeFailure(stage: .connect, code: .connectionRefused, message: "cannot connect: \(why)")
        }
    }

    /// The inventory says `ssh` reaches this host through a proxy; a direct probe could reach
    /// another machine, so none is made.
    static func proxied(_ route: HostRoute) -> ProbeFailure {
        ProbeFailure(stage: .connect, code: .proxied,
                     message: "ssh reaches this host through \(Sanitizer.clean(route.proxyDirective ?? "", limit: 120)); fleettrust probes directly, "
                         + "which could reach another machine, so it did not probe it (--direct probes it from here)")
    }

    static let connectTimeout = ProbeFailure(stage: .connect, code: .connectTimeout,
                                             message: "no TCP connection within the timeout")
    static let bannerTimeout = ProbeFailure(stage: .banner, code: .bannerTimeout,
                                            message: "the port accepted TCP but sent no SSH identification within the timeout")

    static func closedBeforeBanner(_ detail: String? = nil) -> ProbeFailure {
        ProbeFailure(stage: .banner, code: .connectionClosed,
                     message: "the server closed the connection before identifying itself" + (detail.map { " (\($0))" } ?? ""))
    }

    /// The server spoke, but its first line is not an SSH identification string.
    static func notSSH(firstBytes: [UInt8]) -> ProbeFailure {
        let line = firstBytes.prefix { $0 != 0x0a && $0 != 0x0d }
        return ProbeFailure(stage: .banner, code: .notSSH,
                            message: "the server does not speak SSH; it said \"\(Sanitizer.clean(bytes: Array(line), limit: 60))\"")
    }

    /// Classifies a failed `ssh_connect`, given whether the server's identification arrived.
    static func handshake(libsshError text: String, serverIdentified: Bool, firstBytes: [UInt8]) -> ProbeFailure {
        let lower = text.lowercased()
        if !serverIdentified {
            if firstBytes.isEmpty {
                return lower.contains("timeout") ? bannerTimeout : closedBeforeBanner(text)
            }
            if !firstBytes.beginsLikeSSH && !firstBytes.containsSSHLine {
                return notSSH(firstBytes: firstBytes)
            }
            if lower.contains("banner") || lower.contains("protocol") || lower.contains("version") {
                return ProbeFailure(stage: .banner, code: .notSSH, message: "the server's SSH identification is unusable: \(text)")
            }
            if lower.contains("timeout") {
                return ProbeFailure(stage: .banner, code: .bannerTimeout,
                                    message: "the server started but did not complete its SSH identification within the timeout")
            }
            return closedBeforeBanner(text)
        }
        if lower.contains("no match for method") {
            return ProbeFailure(stage: .keyExchange, code: .noCommonAlgorithm, message: text)
        }
        if lower.contains("timeout") {
            return ProbeFailure(stage: .keyExchange, code: .kexTimeout,
                                message: "the key exchange did not finish within the timeout")
        }
        if lower.contains("signature") {
            return ProbeFailure(stage: .keyExchange, code: .badSignature,
                                message: "the server's signature over the key exchange did not verify: \(text)")
        }
        if lower.contains("socket error") || lower.contains("disconnected") || lower.contains("reset") {
            return ProbeFailure(stage: .keyExchange, code: .connectionClosed,
                                message: "the server closed the connection during the key exchange (\(text))")
        }
        return ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "key exchange failed: \(text)")
    }

    /// The failure of a key type both clients failed: the one that got further with the server
    /// (`ours` on a tie, since libssh only ever runs after ours). libssh opens a connection of its
    /// own and, like our client, sends its identification before it reads the server's, so a
    /// server (or a load) can fail it at the connect or the identification after it answered
    /// ours; reporting that would say less than was learned, and a connect failure is one `ssh`
    /// shares, which would hide that the server answered.
    /// A cancel during libssh's attempt stays the cancel.
    static func furthest(ours: ProbeFailure, libssh: ProbeFailure) -> ProbeFailure {
        if libssh.stage == .cancelled { return libssh }
        return reach(libssh) > reach(ours) ? libssh : ours
    }

    /// How far a failed attempt got: nothing reached, the port connected, some bytes from the
    /// server, its identification read, the algorithms agreed (a key-exchange failure other than
    /// having none in common).
    private static func reach(_ failure: ProbeFailure) -> Int {
        switch failure.stage {
        case .common(.resolve), .common(.proxy), .common(.cancelled): return 0
        case .common(.connect): return 1
        case .ssh(.banner): return failure.code == .notSSH ? 3 : 2
        case .ssh(.keyExchange): return failure.code == .noCommonAlgorithm ? 4 : 5
        case .ssh(.hostKey), .tls: return 6
        }
    }

    /// The host-key algorithms a server listed in libssh's "no match" error, if it did.
    static func serverHostKeyAlgorithms(inLibsshError text: String) -> [String]? {
        guard let method = text.range(of: "no match for method server host key algo"),
              let open = text[method.upperBound...].range(of: "server ["),
              let close = text[open.upperBound...].firstIndex(of: "]") else { return nil }
        return text[open.upperBound..<close].split(separator: ",").map(String.init)
    }
}

private extension [UInt8] {
    /// Whether these bytes start with `SSH-`, or with as much of it as has arrived.
    var beginsLikeSSH: Bool {
        let marker = Array("SSH-".utf8)
        let length = Swift.min(count, marker.count)
        return self[..<length].elementsEqual(marker[..<length])
    }

    /// Whether an identification line starts after some pre-identification line.
    var containsSSHLine: Bool {
        let marker = Array("\nSSH-".utf8)
        guard count >= marker.count else { return false }
        return (0...(count - marker.count)).contains { self[$0..<($0 + marker.count)].elementsEqual(marker) }
    }
}
