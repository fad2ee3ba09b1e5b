/// The byte encodings of sntrup761: the radix encoding that packs p numbers below a modulus m
/// into about p·log256(m) bytes (public keys: m = q, 1158 bytes; ciphertexts: rounded
/// coefficients, m = (q+2)/3, 1007 bytes), and the two-bit encoding of small polynomials
/// (191 bytes).
///
/// The radix encoding merges neighbours pairwise (r0 + m0·r1 below m0·m1), writes the low bytes
/// of each merged value while it is 2^14 or more, and recurses on the halves. Decoding reads the
/// same byte positions; it reduces every output below its modulus, so bytes from a hostile
/// server still give numbers in range, never a trap.
enum Sntrup761Encoding {
    static let publicKeyModulus = UInt16(Sntrup761Ring.q)
    static let roundedModulus = UInt16((Sntrup761Ring.q + 2) / 3)
    static let smallBytes = (Sntrup761Ring.p + 3) / 4

    /// A polynomial mod q, as in a public key.
    static func encodeRq(_ r: [Int16]) -> [UInt8] {
        encode(r.map { UInt16(Int32($0) + Sntrup761Ring.halfQ) },
               moduli: [UInt16](repeating: publicKeyModulus, count: Sntrup761Ring.p))
    }

    static func decodeRq(_ bytes: [UInt8]) -> [Int16] {
        decode(bytes, moduli: [UInt16](repeating: publicKeyModulus, count: Sntrup761Ring.p))
            .map { Int16(Int32($0) - Sntrup761Ring.halfQ) }
    }

    /// A rounded polynomial (every coefficient a multiple of 3), as in a ciphertext.
    static func encodeRounded(_ r: [Int16]) -> [UInt8] {
        encode(r.map { UInt16((Int32($0) + Sntrup761Ring.halfQ) / 3) },
               moduli: [UInt16](repeating: roundedModulus, count: Sntrup761Ring.p))
    }

    static func decodeRounded(_ bytes: [UInt8]) -> [Int16] {
        decode(bytes, moduli: [UInt16](repeating: roundedModulus, count: Sntrup761Ring.p))
            .map { Int16(Int32($0) * 3 - Sntrup761Ring.halfQ) }
    }

    /// Four coefficients a byte, each as c + 1 in two bits, the first in the lowest bits.
    static func encodeSmall(_ f: [Int8]) -> [UInt8] {
        (0..<smallBytes).map { index in
            var byte: UInt8 = 0
            for slot in 0..<4 where 4 * index + slot < f.count {
                byte |= UInt8(truncatingIfNeeded: f[4 * index + slot] + 1) << (2 * slot)
            }
            return byte
        }
    }

    /// The inverse of `encodeSmall` for the p coefficients (the two-bit value 3 reads as 2, as
    /// the reference reads it; only our own secret key is ever decoded this way, and a byte past
    /// the end reads as zero coefficients).
    static func decodeSmall(_ bytes: ArraySlice<UInt8>) -> [Int8] {
        let start = bytes.startIndex
        return (0..<Sntrup761Ring.p).map { index in
            let byte = start + index / 4 < bytes.endIndex ? bytes[start + index / 4] : 0x55
            return Int8((byte >> (2 * (index % 4))) & 3) - 1
        }
    }

    /// Packs values (each below its modulus, every modulus below 2^14). Each level's merged
    /// pairs overwrite the front of the same two arrays (pair i lands at i, after both its
    /// numbers were read); how many bytes a pair writes depends on the moduli only.
    static func encode(_ values: [UInt16], moduli: [UInt16]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2 * values.count)
        var values = values.map(UInt32.init)
        var moduli = moduli.map(UInt32.init)
        var count = min(values.count, moduli.count)
        values.withUnsafeMutableBufferPointer { values in
            moduli.withUnsafeMutableBufferPointer { moduli in
                while count > 1 {
                    var merged = 0
                    for i in stride(from: 0, to: count - 1, by: 2) {
                        var r = values[i] + values[i + 1] * moduli[i]
                        var m = moduli[i] * moduli[i + 1]
                        while m >= 16384 {
                            out.append(UInt8(truncatingIfNeeded: r))
                            r >>= 8
                            m = (m + 255) >> 8
                        }
                        values[merged] = r
                        moduli[merged] = m
                        merged += 1
                    }
                    if count % 2 == 1 {
                        values[merged] = values[count - 1]
                        moduli[merged] = moduli[count - 1]
                        merged += 1
                    }
                    count = merged
                }
            }
        }
        if count == 1, var r = values.first, var m = moduli.first {
            while m > 1 {
                out.append(UInt8(truncatingIfNeeded: r))
                r >>= 8
                m = (m + 255) >> 8
            }
        }
        return out
    }

    /// Unpacks `moduli.count` values, each below its modulus, whatever the bytes say; a byte
    /// past the end reads as zero (callers check the length first).
    static func decode(_ bytes: [UInt8], moduli: [UInt16]) -> [UInt16] {
        var offset = 0
        return decode(bytes, offset: &offset, moduli: moduli.map(UInt32.init)).map { UInt16(truncatingIfNeeded: $0) }
    }

    private static func decode(_ bytes: [UInt8], offset: inout Int, moduli: [UInt32]) -> [UInt32] {
        func next() -> UInt32 {
            defer { offset += 1 }
            return offset < bytes.count ? UInt32(bytes[offset]) : 0
        }
        guard moduli.count > 1 else {
            guard let m = moduli.first, m > 1 else { return moduli.map { _ in 0 } }
            var r = next()
            if m > 256 { r += next() << 8 }
            return [r % m]
        }
        // This level's low bytes come first, the merged values' encoding after them.
        var bottoms: [(value: UInt32, scale: UInt32)] = []
        var merged: [UInt32] = []
        for i in stride(from: 0, to: moduli.count - 1, by: 2) {
            let m = moduli[i] * moduli[i + 1]
            if m > 256 * 16383 {
                let low = next()
                bottoms.append((low + (next() << 8), 65536))
                merged.append((((m + 255) >> 8) + 255) >> 8)
            } else if m >= 16384 {
                bottoms.append((next(), 256))
                merged.append((m + 255) >> 8)
            } else {
                bottoms.append((0, 1))
                merged.append(m)
            }
        }
        if moduli.count % 2 == 1 { merged.append(moduli[moduli.count - 1]) }
        let top = decode(bytes, offset: &offset, moduli: merged)
        var out: [UInt32] = []
        out.reserveCapacity(moduli.count)
        var low = Divisor(moduli[0]), high = Divisor(moduli[1])
        for (pair, bottom) in bottoms.enumerated() {
            // A level's moduli are all the same but the last: a new divisor is rare.
            if low.modulus != moduli[2 * pair] { low = Divisor(moduli[2 * pair]) }
            if high.modulus != moduli[2 * pair + 1] { high = Divisor(moduli[2 * pair + 1]) }
            let r = bottom.value &+ bottom.scale &* top[pair]
            let quotient = low.quotient(r)
            out.append(r &- quotient &* low.modulus)
            out.append(high.remainder(quotient))
        }
        if moduli.count % 2 == 1 { out.append(top[top.count - 1]) }
        return out
    }

    /// Division by a modulus below 2^16 as a multiplication by 2^48/m rounded up: for r below
    /// 2^32 the error stays under 2^-16 < 1/m, so the quotient is exact. Decoding divides every
    /// pair of numbers; a division instruction costs several times a multiplication.
    private struct Divisor {
        let modulus: UInt32
        private let reciprocal: UInt64

        init(_ modulus: UInt32) {
            self.modulus = modulus
            reciprocal = (1 << 48) / UInt64(modulus) + 1
        }

        func quotient(_ r: UInt32) -> UInt32 {
            let (high, low) = UInt64(r).multipliedFullWidth(by: reciprocal)
            return UInt32(truncatingIfNeeded: high << 16 | low >> 48)
        }

        func remainder(_ r: UInt32) -> UInt32 { r &- quotient(r) &* modulus }
    }
}
