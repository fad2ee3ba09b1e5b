import Foundation
import XCTest
import FleetTrustTestFleet
@testable import FleetTrustSSH

/// The ring products (Karatsuba over `pmaddwd` sums, exact only within the bounds its callers
/// keep) against the schoolbook product over 64-bit integers, reduced afterwards: on random
/// operands and on the extremes, where every coefficient is as large as it may be, so that any
/// overflow or wrap of a 16- or 32-bit sum would show. Each on both kernel paths.
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
        onEachSntrup761Path { path in
            for (f, g) in cases {
                XCTAssertEqual(Sntrup761Ring.multiply(f, small: g), schoolbook(f, g.map(Int16.init), modulus: 4591), "\(path), seed \(seed)")
            }
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
        onEachSntrup761Path { path in
            for (a, b) in cases {
                XCTAssertEqual(Sntrup761Ring.multiply(a, b), schoolbook(a, b, modulus: 4591), "\(path), seed \(seed)")
            }
        }
    }

    func testProductInR3MatchesTheSchoolbookProduct() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let ternary = { (0..<self.p).map { _ in Int8.random(in: -1...1, using: &generator) } }
        let cases = [(ternary(), ternary()), (constant(1), constant(1)), (constant(-1), constant(1)), (ternary(), constant(-1))]
        onEachSntrup761Path { path in
            for (f, g) in cases {
                let expected = schoolbook(f.map(Int16.init), g.map(Int16.init), modulus: 3).map { Int8($0) }
                XCTAssertEqual(Sntrup761Ring.multiply3(f, g), expected, "\(path), seed \(seed)")
            }
        }
    }

    /// The integer product itself, unreduced, the same on both paths at the extremes the
    /// callers allow (2295 by 1024 at every coefficient, of either sign, and random ones).
    func testIntegerProductIsTheSameOnBothPaths() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let random = { (bound: Int16) in (0..<self.p).map { _ in Int16.random(in: -bound...bound, using: &generator) } }
        let cases = [(constant(half), constant(Int16(1024))), (constant(-half), constant(Int16(1024))),
                     (constant(half), constant(Int16(-1024))), (random(half), random(1024)), (random(half), constant(Int16(1)))]
        for (a, b) in cases {
            let portable = Sntrup761KernelPath.withPortablePath { Sntrup761Karatsuba.product(a, b) }
            XCTAssertEqual(Sntrup761Karatsuba.product(a, b), portable, "seed \(seed)")
            XCTAssertEqual(portable[0], Int32(a[0]) * Int32(b[0]), "seed \(seed)")
        }
    }

    /// Where this CPU has AVX2 (as this project's machines do), the AVX2 path is the one taken,
    /// so that the tests on "both paths" are not the portable path twice.
    func testTheAVX2PathIsTakenWhereTheCPUHasIt() throws {
        #if arch(x86_64)
        let cpu = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpu.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ") ?? []
        let expected: Sntrup761KernelPath = flags.contains("avx2") && getenv("FLEETTRUST_SNTRUP761_PORTABLE") == nil ? .avx2 : .portable
        XCTAssertEqual(Sntrup761KernelPath.current, expected)
        #endif
        XCTAssertEqual(Sntrup761KernelPath.withPortablePath { Sntrup761KernelPath.current }, .portable)
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

extension XCTestCase {
    /// body on the path this CPU takes, then with the portable path forced; the argument names
    /// the path for failure messages.
    func onEachSntrup761Path(_ body: (String) throws -> Void) rethrows {
        try body("\(Sntrup761KernelPath.current) path")
        try Sntrup761KernelPath.withPortablePath { try body("portable path") }
    }
}
