#if canImport(Glibc)
import Glibc
#endif

/// What sntrup761 costs the client per host, measured by the shipped code in the shipped build:
/// a key pair as the pool makes it (in a batch, per key) and one decapsulation. `testfleet
/// crypto-cost` prints it so that the CPU benchmark can say, in the same run as the scan, how
/// much of the scan's CPU per key the deciding connections' sntrup761 takes (the test suite's
/// benchmark runs in a debug build, whose figures say nothing about a release).
///
/// Thread CPU time, best of several rounds, so that other work on a shared machine blurs it less.
public enum Sntrup761ClientCost {
    public struct Figures: Sendable {
        /// Thread CPU per key pair, made in a batch as the pool makes them.
        public let keyPairNanoseconds: UInt64
        /// Thread CPU per decapsulation of a ciphertext made for the key, its secret key decoded
        /// once as the pool keeps it.
        public let decapsulationNanoseconds: UInt64
    }

    /// How many exchanges one pooled key pair serves, so that a host's share of a key pair can be
    /// told from the figures.
    public static var exchangesPerKeyPair: Int { EphemeralKeyLifetime.exchangesPerPair }

    /// Best of `rounds` rounds, each of about `operations` key pairs (whole batches) and
    /// `operations` decapsulations.
    public static func measure(rounds: Int = 3, operations: Int = 200) -> Figures {
        let batch = Sntrup761KeyPool.batchSize
        let batches = max(1, operations / batch)
        let (publicKey, secretKeyBytes) = Sntrup761.generateKeyPair()
        guard let secretKey = Sntrup761SecretKey(secretKeyBytes),
              let (ciphertext, secret) = Sntrup761.encapsulate(publicKey: publicKey) else {
            preconditionFailure("a fresh key pair has the right lengths")
        }
        var keyPair = UInt64.max, decapsulation = UInt64.max
        for _ in 0..<max(1, rounds) {
            var start = threadNanoseconds()
            var made = 0
            for _ in 0..<batches { made += Sntrup761KeyBatch.generate(count: batch, random: BinaryPacket.randomBytes).count }
            keyPair = min(keyPair, (threadNanoseconds() - start) / UInt64(made))
            start = threadNanoseconds()
            var agreed = 0
            for _ in 0..<max(1, operations) where Sntrup761.decapsulate(ciphertext: ciphertext, key: secretKey) == secret {
                agreed += 1
            }
            precondition(agreed == max(1, operations), "a decapsulation disagreed with its encapsulation")
            decapsulation = min(decapsulation, (threadNanoseconds() - start) / UInt64(agreed))
        }
        return Figures(keyPairNanoseconds: keyPair, decapsulationNanoseconds: decapsulation)
    }

    private static func threadNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
