import Synchronization

/// The sntrup761 key pairs of this process's hybrid key exchanges: one in service at a time,
/// handed out for up to `EphemeralKeyLifetime.exchangesPerPair` exchanges (which says why that
/// is safe), then the next, made in batches (`Sntrup761KeyBatch`) so that each costs a fraction
/// of a reciprocal in R/q. One made alone cost most of the exchange's CPU.
///
/// A refill runs under the lock, on the thread that found no key pair left: at a scan's start
/// every host's deciding connection arrives within a few milliseconds, and each would otherwise
/// make a batch of its own (sixteen key pairs, about 2.6 ms of a core) for a pool that now serves
/// 512 exchanges per batch. The others wait for that one batch instead, once per 512 exchanges.
enum Sntrup761KeyPool {
    /// A public key, and its secret key decoded once for all the exchanges it serves.
    typealias KeyPair = (publicKey: [UInt8], secretKey: Sntrup761SecretKey)

    static let batchSize = 16
    private static let stock = Mutex(Stock())

    /// The key pair in service, or the next one once it has served its exchanges.
    static func take() -> KeyPair? {
        stock.withLock { stock in
            if stock.spare.isEmpty && !stock.served.hasUsesLeft {
                stock.spare = Sntrup761KeyBatch.generate(count: batchSize, random: BinaryPacket.randomBytes)
            }
            return stock.handOut()
        }
    }

    /// The key pair in service and how many exchanges it has served, and the batch's others.
    private struct Stock {
        var served = ServedKeyPair<KeyPair>()
        var spare: [(publicKey: [UInt8], secretKey: [UInt8])] = []

        /// The pair in service, or the next spare one put in service; nil when there is none.
        mutating func handOut() -> KeyPair? {
            let next = served.hasUsesLeft ? nil : spare.popLast()
            return served.take {
                next.flatMap { next in Sntrup761SecretKey(next.secretKey).map { (next.publicKey, $0) } }
            }
        }
    }
}
