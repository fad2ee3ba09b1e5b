import CResolver
import Glibc
import FleetTrustCore
import Foundation

/// The SSHFP lookup `ssh` makes with `VerifyHostKeyDNS` (`dns.c`'s `getrrsetbyname`): the system
/// resolver's `res_query` with DNSSEC OK, the AD bit as glibc leaves it (only with `options
/// trust-ad`), the answer read by `DNSAnswerParser`.
///
/// `res_nquery` blocks and cannot be interrupted, so each lookup is a `DetachedCall`, waited for
/// at most `timeout`; answers are kept for the life of the resolver (many hosts share a name
/// only rarely, but a re-judge must not ask again).
public final class SystemSSHFPResolver: SSHFPResolving, @unchecked Sendable {
    private let timeout: Double
    private let lock = NSLock()
    private var answers: [String: SSHFPAnswer] = [:]

    public init(timeout: Double = 5) {
        self.timeout = timeout
    }

    public func sshfpLookup(_ name: String) -> SSHFPAnswer {
        if let known = lock.withLock({ answers[name] }) { return known }
        guard let answer = DetachedCall.run(until: .now + .seconds(timeout), { Self.lookUp(name) }) else {
            return .none(why: "no answer within \(Int(timeout)) s")
        }
        lock.withLock { answers[name] = answer }
        return answer
    }

    /// Every name at once, each on a thread of its own, all waited for until one `timeout`.
    public func sshfpAnswers(for names: Set<String>) -> [String: SSHFPAnswer] {
        let asked = names.filter { name in lock.withLock { answers[name] == nil } }
        let group = DispatchGroup()
        for name in asked {
            group.enter()
            Thread.detachNewThread { [self] in
                let answer = Self.lookUp(name)
                lock.withLock { answers[name] = answer }
                group.leave()
            }
        }
        _ = group.wait(timeout: .now() + timeout)
        return lock.withLock {
            Dictionary(uniqueKeysWithValues: names.map { ($0, answers[$0] ?? .none(why: "no answer within \(Int(timeout)) s")) })
        }
    }

    /// Names are asked for only when they are plain host names (no NUL, at most 253 bytes).
    private static func lookUp(_ name: String) -> SSHFPAnswer {
        guard !name.isEmpty, name.utf8.count <= 253, !name.utf8.contains(0) else { return .none(why: "not a DNS name") }
        var buffer = [UInt8](repeating: 0, count: DNSAnswerParser.maximumMessageSize)
        var error: Int32 = 0
        let length = fleettrust_sshfp_query(name, &buffer, Int32(buffer.count), &error)
        guard length >= 0 else { return .none(why: why(error)) }
        switch DNSAnswerParser.parse(Array(buffer.prefix(min(Int(length), buffer.count)))) {
        case .success(let answer): return answer
        case .failure(let malformed): return .none(why: malformed.description)
        }
    }

    /// `h_errno` in words.
    private static func why(_ error: Int32) -> String {
        switch error {
        case HOST_NOT_FOUND: return "the name does not exist"
        case NO_DATA: return "no SSHFP record"
        case TRY_AGAIN: return "the resolver failed (try again)"
        case NO_RECOVERY: return "the resolver refused or failed"
        default: return "the resolver could not be used"
        }
    }
}
