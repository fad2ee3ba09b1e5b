import Synchronization

/// The sntrup761 key pairs of this process's hybrid key exchanges, made in batches
/// (`Sntrup761KeyBatch`) so that each costs a fraction of a reciprocal in R/q: a scan's deciding
/// connections each need a fresh key pair, and one made alone cost most of the exchange's CPU.
///
/// Each key pair is handed out once and then forgotten, as a fresh one would be. A refill runs
/// on the thread that found the pool empty, outside the lock, so other threads keep taking
/// keys (or make a batch of their own) meanwhile; the lock only guards moving key pairs in and
/// out. Unused key pairs waiting in memory number at most a batch per thread that found the
/// pool empty at the same moment.
enum Sntrup761KeyPool {
    static let batchSize = 16
    private static let spare = Mutex<[(publicKey: [UInt8], secretKey: [UInt8])]>([])

    /// A key pair no one else has been or will be given.
    static func take() -> (publicKey: [UInt8], secretKey: [UInt8]) {
        if let keyPair = spare.withLock({ $0.popLast() }) { return keyPair }
        var batch = Sntrup761KeyBatch.generate(count: batchSize, random: BinaryPacket.randomBytes)
        let keyPair = batch.removeLast()
        spare.withLock { $0.append(contentsOf: batch) }
        return keyPair
    }
}
