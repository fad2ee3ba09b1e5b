import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// The sntrup761 KEM on its own: sizes, round trips from a printed seed, implicit rejection,
/// hostile lengths and bytes. That our keys and decapsulation are the reference's is proved
/// against a real sshd (`Sntrup761ExchangeTests`); these tests pin the properties around it.
final class Sntrup761Tests: XCTestCase {
    func testKeysCiphertextsAndSecretsHaveTheReferenceSizes() throws {
        let (publicKey, secretKey) = Sntrup761.generateKeyPair()
        XCTAssertEqual(publicKey.count, 1158)
        XCTAssertEqual(secretKey.count, 1763)
        XCTAssertEqual(Array(secretKey[382..<1540]), publicKey, "the secret key carries the public key after f and 1/g")
        let (ciphertext, secret) = try XCTUnwrap(Sntrup761.encapsulate(publicKey: publicKey))
        XCTAssertEqual(ciphertext.count, 1039)
        XCTAssertEqual(secret.count, 32)
    }

    func testEncapsulatedSecretDecapsulatesForManySeededKeys() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("Sntrup761Tests seed: \(seed)")
        var generator = SeededGenerator(seed: seed)
        var secrets = Set<[UInt8]>()
        for round in 0..<4 {
            let (publicKey, secretKey) = Sntrup761.generateKeyPair(random: { generator.next($0) })
            for _ in 0..<4 {
                let (ciphertext, secret) = try XCTUnwrap(Sntrup761.encapsulate(publicKey: publicKey, random: { generator.next($0) }))
                XCTAssertEqual(Sntrup761.decapsulate(ciphertext: ciphertext, secretKey: secretKey), secret,
                               "round \(round), seed \(seed)")
                secrets.insert(secret)
            }
        }
        XCTAssertEqual(secrets.count, 16, "every encapsulation carries its own secret (seed \(seed))")
    }

    /// Known answers: from fixed seeds, the SHA-256 of the key pair, a ciphertext, its secret and
    /// the implicit-rejection secret of a changed ciphertext, recorded from the plain
    /// schoolbook arithmetic before it was made fast; the fast arithmetic must give every byte.
    func testSeededKeysCiphertextsAndSecretsMatchTheRecordedAnswers() throws {
        let recorded: [UInt64: String] = [
            761: "022f02fdaec7d6b9118738e22a65122e76f6b5d2cc218688bdda54c13888e6d5",
            4591: "720dfe395c1c46a805f6f3a5f508d3c2fd61d074f29eaeb23017817c29d3353d",
            286: "d874a2aee63c6d81e5a895908bc0d76f2fc6586cbbfdd0e0550b26e09b2e9314",
        ]
        try onEachSntrup761Path { path in
            for (seed, expected) in recorded.sorted(by: { $0.key < $1.key }) {
                var generator = SeededGenerator(seed: seed)
                let (publicKey, secretKey) = Sntrup761.generateKeyPair(random: { generator.next($0) })
                let (ciphertext, secret) = try XCTUnwrap(Sntrup761.encapsulate(publicKey: publicKey, random: { generator.next($0) }))
                var corrupted = ciphertext
                corrupted[321] ^= 0x40
                let decapsulated = try XCTUnwrap(Sntrup761.decapsulate(ciphertext: ciphertext, secretKey: secretKey))
                let rejected = try XCTUnwrap(Sntrup761.decapsulate(ciphertext: corrupted, secretKey: secretKey))
                let transcript = publicKey + secretKey + ciphertext + secret + decapsulated + rejected
                let answer = Digest.sha256(transcript).map { String(format: "%02x", $0) }.joined()
                XCTAssertEqual(answer, expected, "\(path), seed \(seed)")
            }
        }
    }

    /// The 16-bit product behind the R/q division steps: for a centred a and |x| ≤ 5400, a·x mod
    /// q lands in -380 ..< q + 380, so a difference of two stays within 5400 and the division
    /// steps can go on without a correction.
    func testSixteenBitProductModQStaysInTheLooseRangeTheDivisionStepsAssume() {
        let half = Int32(Sntrup761Ring.halfQ), q = Sntrup761Ring.q
        var wrong = 0
        for a in Array(stride(from: -half, through: half, by: 13)) + [half - 1, half] {
            let shoup = Sntrup761QReciprocal.shoup(Int16(a))
            for x in Int32(-5400)...5400 {
                let product = Int32(Sntrup761QReciprocal.product(Int16(x), Int16(a), shoup))
                if product < -380 || product >= q + 380 || (product - a * x) % q != 0 { wrong += 1 }
            }
        }
        XCTAssertEqual(wrong, 0)
        let loose = Sntrup761QReciprocal.combine(5400, Int16(half), Sntrup761QReciprocal.shoup(Int16(half)),
                                                 -5400, Int16(half), Sntrup761QReciprocal.shoup(Int16(half)))
        XCTAssertLessThanOrEqual(abs(Int32(loose)), 5400)
        XCTAssertEqual(Sntrup761Ring.freezeQ(Int32(loose)), Sntrup761Ring.freezeQ(2 * 5400 * half))
    }

    func testSameSeedGivesSameKeys() {
        var first = SeededGenerator(seed: 761), second = SeededGenerator(seed: 761)
        let a = Sntrup761.generateKeyPair(random: { first.next($0) })
        let b = Sntrup761.generateKeyPair(random: { second.next($0) })
        XCTAssertEqual(a.publicKey, b.publicKey)
        XCTAssertEqual(a.secretKey, b.secretKey)
    }

    /// A changed byte anywhere (the rounded polynomial or the confirmation hash) gives the
    /// implicit-rejection secret: the session hash with prefix 0 over rho (bytes 1540..<1731 of
    /// the secret key) and the ciphertext as received.
    func testCorruptedCiphertextGivesTheImplicitRejectionSecret() throws {
        let (publicKey, secretKey) = Sntrup761.generateKeyPair()
        let (ciphertext, secret) = try XCTUnwrap(Sntrup761.encapsulate(publicKey: publicKey))
        let rho = Array(secretKey[1540..<1731])
        for position in [0, 500, 1006, 1007, 1038] {
            var corrupted = ciphertext
            corrupted[position] ^= 0x01
            let rejected = try XCTUnwrap(Sntrup761.decapsulate(ciphertext: corrupted, secretKey: secretKey))
            XCTAssertNotEqual(rejected, secret, "byte \(position)")
            let expected = Array(Digest.sha512([0] + Array(Digest.sha512([3] + rho).prefix(32)) + corrupted).prefix(32))
            XCTAssertEqual(rejected, expected, "byte \(position)")
        }
    }

    func testWrongLengthsAreRefusedNotTrapped() {
        let (publicKey, secretKey) = Sntrup761.generateKeyPair()
        for length in [0, 1, 1038, 1040, 4096] {
            XCTAssertNil(Sntrup761.decapsulate(ciphertext: [UInt8](repeating: 0xff, count: length), secretKey: secretKey))
        }
        XCTAssertNil(Sntrup761.decapsulate(ciphertext: [UInt8](repeating: 0, count: 1039), secretKey: Array(secretKey.dropLast())))
        XCTAssertNil(Sntrup761.encapsulate(publicKey: Array(publicKey.dropLast())))
        XCTAssertNil(Sntrup761.encapsulate(publicKey: publicKey + [0]))
    }

    func testHostileCiphertextBytesGiveASecretNotATrap() throws {
        let (_, secretKey) = Sntrup761.generateKeyPair()
        var generator = SeededGenerator(seed: 4591)
        for ciphertext in [[UInt8](repeating: 0xff, count: 1039), [UInt8](repeating: 0, count: 1039), generator.next(1039)] {
            let secret = try XCTUnwrap(Sntrup761.decapsulate(ciphertext: ciphertext, secretKey: secretKey))
            XCTAssertEqual(secret.count, 32)
        }
    }

    func testRadixEncodingRoundTripsAndDecodesAnyBytesIntoRange() {
        var generator = SeededGenerator(seed: 1158)
        let p = Sntrup761Ring.p
        let h = (0..<p).map { _ in Int16(Int(generator.next(2).withUnsafeBytes { $0.load(as: UInt16.self) }) % 4591 - 2295) }
        let encoded = Sntrup761Encoding.encodeRq(h)
        XCTAssertEqual(encoded.count, 1158)
        XCTAssertEqual(Sntrup761Encoding.decodeRq(encoded), h)
        let rounded = h.map { $0 - $0 % 3 }
        XCTAssertEqual(Sntrup761Encoding.encodeRounded(rounded).count, 1007)
        XCTAssertEqual(Sntrup761Encoding.decodeRounded(Sntrup761Encoding.encodeRounded(rounded)), rounded)
        for bytes in [[UInt8](repeating: 0xff, count: 1158), generator.next(1158)] {
            XCTAssertTrue(Sntrup761Encoding.decodeRq(bytes).allSatisfy { (-2295...2295).contains($0) })
            XCTAssertTrue(Sntrup761Encoding.decodeRounded(Array(bytes.prefix(1007))).allSatisfy { (-2295...2295).contains($0) && $0 % 3 == 0 })
        }
    }

    func testReciprocalsInvert() throws {
        try onEachSntrup761Path { path in try assertReciprocalsInvert(path) }
    }

    private func assertReciprocalsInvert(_ path: String) throws {
        var generator = SeededGenerator(seed: 286)
        let p = Sntrup761Ring.p
        var one = [Int8](repeating: 0, count: p)
        one[0] = 1
        let g = generator.next(p).map { Int8($0 % 3) - 1 }
        if let inverse = Sntrup761Ring.reciprocal3(g) {
            XCTAssertEqual(Sntrup761Ring.multiply3(g, inverse), one, path)
        }
        let f = generator.next(p).map { Int8($0 % 3) - 1 }
        let inverse = try XCTUnwrap(Sntrup761Ring.reciprocalOfThreeTimes(f.map(Int16.init)))
        let threeF = Sntrup761Ring.multiply(inverse, small: f).map { Sntrup761Ring.freezeQ(3 * Int32($0)) }
        XCTAssertEqual(threeF, one.map(Int16.init), path)
        XCTAssertNil(Sntrup761Ring.reciprocal3([Int8](repeating: 0, count: p)))
    }

    /// A batch's keys come from one reciprocal in each ring (Montgomery's trick), yet the
    /// randomness is drawn in the same order and the keys must be those of single key pairs,
    /// byte for byte.
    func testBatchOfKeyPairsEqualsSingleKeyPairsFromTheSameRandomness() {
        onEachSntrup761Path { path in
            let batch = assertBatchEqualsSingleKeyPairs(count: 5, prefix: [], path: path)
            XCTAssertEqual(Set(batch.map(\.publicKey)).count, 5, path)
        }
    }

    /// A batch whose drawn g is not invertible in R/3 (here the first, all zeros: random ones
    /// almost never are) is made as single key pairs from the same bytes, which draw that g
    /// again: still byte for byte, and the same bytes used.
    func testBatchWithANonInvertibleGEqualsSingleKeyPairsFromTheSameRandomness() throws {
        // Each little-endian word 0x20000000 draws the coefficient 0.
        let zeroG = Array([[UInt8]](repeating: [0, 0, 0, 0x20], count: Sntrup761Ring.p).joined())
        XCTAssertEqual(Sntrup761.smallRandom { _ in zeroG }, [Int8](repeating: 0, count: Sntrup761Ring.p))
        try onEachSntrup761Path { path in
            let batch = assertBatchEqualsSingleKeyPairs(count: 3, prefix: zeroG, path: path)
            let (ciphertext, secret) = try XCTUnwrap(Sntrup761.encapsulate(publicKey: batch[0].publicKey))
            XCTAssertEqual(Sntrup761.decapsulate(ciphertext: ciphertext, secretKey: batch[0].secretKey), secret, path)
        }
    }

    /// A batch of `count` from `prefix` then a fresh seed's bytes, against as many single key
    /// pairs from the same bytes: the same keys and the same bytes used. Returns the batch.
    private func assertBatchEqualsSingleKeyPairs(count: Int, prefix: [UInt8], path: String)
        -> [(publicKey: [UInt8], secretKey: [UInt8])] {
        let seed = UInt64.random(in: 0...UInt64.max)
        var batchStream = PrefixedStream(prefix: prefix, rest: SeededGenerator(seed: seed))
        var singleStream = batchStream
        let batch = Sntrup761KeyBatch.generate(count: count, random: { batchStream.next($0) })
        for (index, pair) in batch.enumerated() {
            let single = Sntrup761.generateKeyPair(random: { singleStream.next($0) })
            XCTAssertEqual(pair.publicKey, single.publicKey, "key \(index), \(path), seed \(seed)")
            XCTAssertEqual(pair.secretKey, single.secretKey, "key \(index), \(path), seed \(seed)")
        }
        XCTAssertEqual(batchStream.next(8), singleStream.next(8), "both used the same randomness (\(path), seed \(seed))")
        return batch
    }

    /// Montgomery's trick gives each f its own 1/(3f).
    func testBatchReciprocalsInvertEachPolynomial() {
        var generator = SeededGenerator(seed: 1521)
        let p = Sntrup761Ring.p
        let fs = (0..<4).map { _ in Sntrup761.shortRandom({ generator.next($0) }) }
        var one = [Int16](repeating: 0, count: p)
        one[0] = 1
        onEachSntrup761Path { path in
            for (index, (f, inverse)) in zip(fs, Sntrup761KeyBatch.reciprocalsOfThreeTimes(fs)).enumerated() {
                XCTAssertEqual(Sntrup761Ring.multiply(inverse, small: f).map { Sntrup761Ring.freezeQ(3 * Int32($0)) }, one,
                               "f \(index), \(path)")
            }
        }
    }

    /// The sorting network behind a short polynomial sorts like the standard library,
    /// the words at both ends of the range and ties included, on both kernel paths.
    func testConstantTimeSortSortsAnyWords() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let edges: [UInt32] = [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, .max]
        for count in [761, 1024, 3] {
            let words = (0..<count).map { index in
                index % 5 == 0 ? edges[index % edges.count] : UInt32.random(in: 0...UInt32.max, using: &generator)
            }
            onEachSntrup761Path { path in
                XCTAssertEqual(ConstantTimeSort.sorted(words), words.sorted(), "\(count) words, \(path), seed \(seed)")
            }
        }
    }

    /// The pool hands each key pair out for `EphemeralKeyLifetime.exchangesPerPair` exchanges in a
    /// row (the first run may have begun before this test), never again after, and each works.
    func testPooledKeyPairsServeABoundedRunEachAndWork() throws {
        let uses = EphemeralKeyLifetime.exchangesPerPair
        let taken = try (0..<(2 * uses + 2)).map { _ in try XCTUnwrap(Sntrup761KeyPool.take()) }
        assertKeyPairRuns(taken.map(\.publicKey), bound: uses)
        var checked = Set<[UInt8]>()
        for (publicKey, secretKey) in taken where checked.insert(publicKey).inserted {
            let (ciphertext, secret) = try XCTUnwrap(Sntrup761.encapsulate(publicKey: publicKey))
            XCTAssertEqual(Sntrup761.decapsulate(ciphertext: ciphertext, key: secretKey), secret)
        }
    }
}

private extension SeededGenerator {
    /// `count` bytes, reproducible from the seed.
    mutating func next(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }
}

/// Fixed bytes first, then a seeded stream.
private struct PrefixedStream {
    var prefix: [UInt8]
    var rest: SeededGenerator

    mutating func next(_ count: Int) -> [UInt8] {
        let taken = Array(prefix.prefix(count))
        prefix.removeFirst(taken.count)
        return taken + rest.next(count - taken.count)
    }
}
