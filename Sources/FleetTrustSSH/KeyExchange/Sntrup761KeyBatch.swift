/// sntrup761 key pairs made several at a time, because one reciprocal in R/q (1/(3f), the
/// 2p - 1 division steps) was most of a key pair's cost: R/q is a field, so Montgomery's trick
/// (as in Bernstein, Brumley, Chen and Tuveri's "OpenSSLNTRU") turns n reciprocals into one
/// reciprocal of the product f_1···f_n plus, per key, one product of two full elements and two
/// products by a small polynomial.
///
/// The randomness is drawn in exactly the order of n single key pairs (each key's g until it
/// is invertible in R/3, then its f, then its rho), and the reciprocals are the same field
/// elements, so a batch of n is byte for byte n single key pairs from the same stream. R/3 is
/// not a field (x^p - x - 1 has factors mod 3, which is why g is drawn again when it is not
/// invertible), and a product in R/3 costs about as much as the bitsliced reciprocal, so 1/g
/// stays one reciprocal per key. Every loop runs the same number of times whatever the secrets
/// are; only the batch size, which is public, sets the number of products.
enum Sntrup761KeyBatch {
    /// `count` key pairs (public key, secret key) in the order single calls would give them.
    static func generate(count: Int, random: Sntrup761.RandomBytes) -> [(publicKey: [UInt8], secretKey: [UInt8])] {
        var draws: [(g: [Int8], gInverse: [Int8], f: [Int8], rho: [UInt8])] = []
        for _ in 0..<count {
            var g: [Int8]
            var gInverse: [Int8]?
            repeat {
                g = Sntrup761.smallRandom(random)
                gInverse = Sntrup761Ring.reciprocal3(g)
            } while gInverse == nil
            let f = Sntrup761.shortRandom(random)
            draws.append((g, gInverse ?? [], f, random(Sntrup761.smallBytes)))
        }
        let reciprocals = reciprocalsOfThreeTimes(draws.map(\.f))
        return zip(draws, reciprocals).map { draw, fInverse in
            let publicKey = Sntrup761Encoding.encodeRq(Sntrup761Ring.multiply(fInverse, small: draw.g))
            var secretKey = Sntrup761Encoding.encodeSmall(draw.f) + Sntrup761Encoding.encodeSmall(draw.gInverse)
            secretKey += publicKey
            secretKey += draw.rho
            secretKey += Sntrup761.hash(4, publicKey)
            return (publicKey, secretKey)
        }
    }

    /// 1/(3·f_i) in R/q for short (nonzero) f_i, by one reciprocal: with prefix products
    /// P_i = f_1···f_i and R_i = 1/(3·P_i), 1/(3·f_i) = R_i·P_(i-1) and R_(i-1) = R_i·f_i.
    static func reciprocalsOfThreeTimes(_ fs: [[Int8]]) -> [[Int16]] {
        guard let first = fs.first else { return [] }
        var prefixes = [first.map(Int16.init)]
        for f in fs.dropFirst() { prefixes.append(Sntrup761Ring.multiply(prefixes[prefixes.count - 1], small: f)) }
        // A product of nonzero elements of a field is nonzero, so this reciprocal exists.
        guard var reciprocal = Sntrup761Ring.reciprocalOfThreeTimes(prefixes[prefixes.count - 1]) else {
            preconditionFailure("a product of short polynomials is invertible in R/q, a field")
        }
        var reciprocals = [[Int16]](repeating: [], count: fs.count)
        for index in stride(from: fs.count - 1, to: 0, by: -1) {
            reciprocals[index] = Sntrup761Ring.multiply(reciprocal, prefixes[index - 1])
            reciprocal = Sntrup761Ring.multiply(reciprocal, small: fs[index])
        }
        reciprocals[0] = reciprocal
        return reciprocals
    }
}
