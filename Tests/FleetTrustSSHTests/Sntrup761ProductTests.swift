import XCTest
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// The ring products (Karatsuba over `pmaddwd` sums, exact only within the bounds its callers
/// keep) against the schoolbook product over 64-bit integers, reduced afterwards: on random
/// operands and on the extremes, where every coefficient is as large as it may be, so that any
/// overflow or wrap of a 16- or 32-bit sum would show.
final class Sntrup761ProductTests: XCTestCase {
    private let p = Sntrup761Ring.p
    private let half = Int16(Sntrup761Ring.halfQ)

    func testProductByASmallPolynomialMatchesTheSchoolbookProduct() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let random = { (0..<self.p).map { _ in Int16.random(in: -self.half...self.half, using: &generator) } }
        let ternary = { (0..<self.p).map { _ in Int8.random(in: -1...1, using: &generator) } }
        let cases: [([Int16], [Int8])] = [
            (random(), ternary()), (constant(half), constant(1)), (constant(half), constant(-1)),
            (constant(-half), constant(1)), (random(), constant(-1)),
        ]
        for (f, g) in cases {
            XCTAssertEqual(Sntrup761Ring.multiply(f, small: g), schoolbook(f, g.map(Int16.init), modulus: 4591), "seed \(seed)")
        }
    }

    func testProductOfTwoFullElementsMatchesTheSchoolbookProduct() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let random = { (0..<self.p).map { _ in Int16.random(in: -self.half...self.half, using: &generator) } }
        // 1023 and -1024 are the ends of the split's low part, 1024 and 2047 just past them.
        let edges: [Int16] = [1023, -1024, 1024, 2047, -2048, half, -half]
        let mixed = (0..<p).map { edges[$0 % edges.count] }
        let cases = [(random(), random()), (constant(half), constant(half)), (constant(half), constant(-half)),
                     (random(), constant(-half)), (constant(-half), mixed), (mixed, mixed)]
        for (a, b) in cases {
            XCTAssertEqual(Sntrup761Ring.multiply(a, b), schoolbook(a, b, modulus: 4591), "seed \(seed)")
        }
    }

    func testProductInR3MatchesTheSchoolbookProduct() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let ternary = { (0..<self.p).map { _ in Int8.random(in: -1...1, using: &generator) } }
        for (f, g) in [(ternary(), ternary()), (constant(1), constant(1)), (constant(-1), constant(1)), (ternary(), constant(-1))] {
            let expected = schoolbook(f.map(Int16.init), g.map(Int16.init), modulus: 3).map { Int8($0) }
            XCTAssertEqual(Sntrup761Ring.multiply3(f, g), expected, "seed \(seed)")
        }
    }

    private func constant<Coefficient: FixedWidthInteger>(_ value: Coefficient) -> [Coefficient] {
        [Coefficient](repeating: value, count: p)
    }

    /// a·b in (Z/modulus)[x]/(x^p - x - 1), centred, by the definition.
    private func schoolbook(_ a: [Int16], _ b: [Int16], modulus: Int64) -> [Int16] {
        var wide = [Int64](repeating: 0, count: 2 * p - 1)
        for i in 0..<p { for j in 0..<p { wide[i + j] += Int64(a[i]) * Int64(b[j]) } }
        for k in stride(from: 2 * p - 2, through: p, by: -1) {
            wide[k - p] += wide[k]
            wide[k - p + 1] += wide[k]
        }
        return wide[0..<p].map { value -> Int16 in
            let reduced = ((value % modulus) + modulus) % modulus
            return Int16(reduced > (modulus - 1) / 2 ? reduced - modulus : reduced)
        }
    }
}
