import Glibc
import FleetTrustCore

/// The name-lists of the last few server KEXINITs one thread has read, by their exact bytes.
///
/// The servers of a fleet are mostly configured alike, and every connection to one server gets
/// the same KEXINIT but for its 16-byte cookie; reading its sixty-odd names anew (splitting each
/// list, matching every name against the known ones, building the lists) was the largest cost of
/// a handshake outside the cryptography and the kernel. A KEXINIT whose bytes after the cookie
/// are exactly those of one read before gets that one's lists, and the cleaned names its report
/// carries; any other is read in full. Only a KEXINIT read without a failure is kept, so every
/// refusal is still the reader's; one larger than `largest` (no stock server's is) is read each
/// time rather than kept.
final class RecentServerProposals {
    /// What `KexInit(parsing:)` read from a KEXINIT's bytes after its cookie.
    struct Proposal {
        let tail: [UInt8]
        let lists: [[String]]
        let firstKexPacketFollows: Bool
        let reported: KexInit.ReportedNames
    }

    /// How many distinct KEXINITs a thread keeps; past it the oldest goes.
    static let capacity = 8
    /// The longest KEXINIT kept (a stock sshd's is about 1,100 bytes).
    static let largest = 4096
    /// Where the bytes after the message number and the cookie begin.
    static let tailStart = 17

    /// This thread's (like every `ExchangeSession`, a KEXINIT is read on one thread).
    static let current = PerThread<RecentServerProposals> { RecentServerProposals() }

    private var kept: [Proposal] = []
    private var oldest = 0

    /// The lists read before from a KEXINIT with the same message number and the same bytes after its cookie.
    func proposal(for payload: [UInt8]) -> Proposal? {
        guard payload.count > Self.tailStart, payload[0] == BinaryPacket.Message.kexInit.rawValue else { return nil }
        let length = payload.count - Self.tailStart
        return payload.withUnsafeBytes { bytes in
            let tail = UnsafeRawBufferPointer(rebasing: bytes[Self.tailStart...])
            return kept.first { proposal in
                proposal.tail.count == length && proposal.tail.withUnsafeBytes { memcmp($0.baseAddress!, tail.baseAddress!, length) == 0 }
            }
        }
    }

    /// Keeps what was read from `payload`, a KEXINIT read without a failure.
    func keep(_ payload: [UInt8], lists: [[String]], firstKexPacketFollows: Bool, reported: KexInit.ReportedNames) {
        guard payload.count > Self.tailStart, payload.count <= Self.largest, payload[0] == BinaryPacket.Message.kexInit.rawValue else { return }
        let proposal = Proposal(tail: Array(payload[Self.tailStart...]), lists: lists, firstKexPacketFollows: firstKexPacketFollows,
                                reported: reported)
        if kept.count < Self.capacity {
            kept.append(proposal)
        } else {
            kept[oldest] = proposal
            oldest = (oldest + 1) % Self.capacity
        }
    }
}
