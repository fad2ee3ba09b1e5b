import Foundation

/// A small deterministic generator (SplitMix64), so that a failing randomised test case can
/// be replayed from its seed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SeededGenerator {
    /// A generator for a randomised test: a fresh seed each run (or `FLEETTRUST_TEST_SEED`, to
    /// replay one), printed with `label` so that a failing run can be replayed.
    public static func announced(_ label: String) -> SeededGenerator {
        let seed = ProcessInfo.processInfo.environment["FLEETTRUST_TEST_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        print("\(label) seed: \(seed) (FLEETTRUST_TEST_SEED=\(seed) replays it)")
        return SeededGenerator(seed: seed)
    }
}
