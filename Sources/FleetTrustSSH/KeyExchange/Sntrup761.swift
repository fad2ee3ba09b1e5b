import FleetTrustCore

/// Streamlined NTRU Prime sntrup761, the post-quantum half of OpenSSH's first-choice key exchange
/// (`sntrup761x25519-sha512@openssh.com`): a key-encapsulation mechanism whose keys and
/// ciphertexts are byte for byte those of the specification's reference code, which OpenSSH
/// ships as `sntrup761.c`.
///
/// We write it ourselves because neither Debian 12's libssh nor its OpenSSL has it, and a server
/// configured with only this key exchange would otherwise be out of reach. The real `sshd` is
/// the proof: if keys or decapsulation were wrong, the shared secret would differ and the
/// server's signature over the exchange hash would not verify.
///
/// Layouts (p = 761, q = 4591, w = 286): public key = Rq encoding of h (1158 bytes); secret key =
/// small f || small 1/g mod 3 || public key || rho || Hash4(public key) (1763 bytes); ciphertext
/// = rounded encoding || confirmation hash (1039 bytes); shared secret 32 bytes. Every hash is
/// the first 32 bytes of SHA-512 over a one-byte prefix and the input.
enum Sntrup761 {
    /// A source of random bytes: returns that many.
    typealias RandomBytes = (Int) -> [UInt8]

    static let publicKeyBytes = 1158
    static let secretKeyBytes = 1763
    static let ciphertextBytes = 1039
    static let sharedSecretBytes = 32
    private static let roundedBytes = 1007
    private static let p = Sntrup761Ring.p
    static let smallBytes = Sntrup761Encoding.smallBytes

    /// A key pair, by default from OpenSSL's generator: the same bytes as the first of a batch
    /// (`Sntrup761KeyBatch`) drawn from the same randomness.
    static func generateKeyPair(random: RandomBytes = BinaryPacket.randomBytes) -> (publicKey: [UInt8], secretKey: [UInt8]) {
        Sntrup761KeyBatch.generate(count: 1, random: random)[0]
    }

    /// A ciphertext and the secret it carries; nil for a public key of the wrong length.
    static func encapsulate(publicKey: [UInt8], random: RandomBytes = BinaryPacket.randomBytes)
        -> (ciphertext: [UInt8], sharedSecret: [UInt8])? {
        guard publicKey.count == publicKeyBytes else { return nil }
        let r = shortRandom(random)
        let (ciphertext, encodedR) = hide(r, h: Sntrup761Encoding.decodeRq(publicKey), publicKeyHash: hash(4, publicKey))
        return (ciphertext, sessionHash(1, encodedR, ciphertext))
    }

    /// The shared secret in a ciphertext; nil when the ciphertext or the secret key has the wrong
    /// length. A ciphertext of the right length that was not made for this key gives an
    /// unrelated secret (implicit rejection), as the reference does, never a failure.
    static func decapsulate(ciphertext: [UInt8], secretKey: [UInt8]) -> [UInt8]? {
        guard let key = Sntrup761SecretKey(secretKey) else { return nil }
        return decapsulate(ciphertext: ciphertext, key: key)
    }

    /// The same with the secret key decoded already; nil for a ciphertext of the wrong length.
    static func decapsulate(ciphertext: [UInt8], key: Sntrup761SecretKey) -> [UInt8]? {
        guard ciphertext.count == ciphertextBytes else { return nil }
        let r = decrypt(Sntrup761Encoding.decodeRounded(Array(ciphertext[0..<roundedBytes])), f: key.f, gInverse: key.gInverse)
        let (recomputed, encodedR) = hide(r, h: key.h, publicKeyHash: key.publicKeyHash)
        var difference: UInt8 = 0
        for (mine, theirs) in zip(recomputed, ciphertext) { difference |= mine ^ theirs }
        // mismatch is 1 when the ciphertexts differ: the session hash then covers rho, with prefix 0.
        let mismatch = UInt8(truncatingIfNeeded: -Int32(Sntrup761Ring.nonzeroMask(Int32(difference))))
        let mask = 0 &- mismatch
        let chosen = zip(encodedR, key.rho).map { $0 ^ (mask & ($0 ^ $1)) }
        return sessionHash(1 &- mismatch, chosen, ciphertext)
    }

    /// The ciphertext for r (rounded h·r, then the confirmation hash) and r's encoding.
    private static func hide(_ r: [Int8], h: [Int16], publicKeyHash: [UInt8]) -> (ciphertext: [UInt8], encodedR: [UInt8]) {
        let rounded = Sntrup761Ring.multiply(h, small: r).map { $0 - Int16(Sntrup761Ring.freeze3(Int32($0))) }
        let encodedR = Sntrup761Encoding.encodeSmall(r)
        let confirmation = hash(2, hash(3, encodedR) + publicKeyHash)
        return (Sntrup761Encoding.encodeRounded(rounded) + confirmation, encodedR)
    }

    /// r from c: e = 3·f·c mod q, lifted to R/3, times 1/g; the fixed weight-w vector when the
    /// result does not have weight w (chosen without a branch on the secret).
    private static func decrypt(_ c: [Int16], f: [Int8], gInverse: [Int8]) -> [Int8] {
        let cf = Sntrup761Ring.multiply(c, small: f)
        let e = cf.map { Sntrup761Ring.freeze3(Int32(Sntrup761Ring.freezeQ(3 * Int32($0)))) }
        let ev = Sntrup761Ring.multiply3(e, gInverse)
        let weight = ev.reduce(Int32(0)) { $0 + Int32($1 & 1) }
        let wrongWeight = Int8(truncatingIfNeeded: Sntrup761Ring.nonzeroMask(weight - Int32(Sntrup761Ring.weight)))
        return ev.indices.map { index in
            index < Sntrup761Ring.weight ? ((ev[index] ^ 1) & ~wrongWeight) ^ 1 : ev[index] & ~wrongWeight
        }
    }

    /// The first 32 bytes of SHA-512(prefix || input).
    static func hash(_ prefix: UInt8, _ input: [UInt8]) -> [UInt8] {
        Array(Digest.sha512([prefix] + input).prefix(32))
    }

    /// Hash_prefix(Hash3(r) || ciphertext): the session key, prefix 1 for a ciphertext that
    /// checked out, 0 for an implicit rejection.
    private static func sessionHash(_ prefix: UInt8, _ encodedR: [UInt8], _ ciphertext: [UInt8]) -> [UInt8] {
        hash(prefix, hash(3, encodedR) + ciphertext)
    }

    private static func random32(_ random: RandomBytes) -> [UInt32] {
        let bytes = random(4 * p)
        return (0..<p).map { index in
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[4 * index + $1]) << (8 * $1) }
        }
    }

    /// A small polynomial: every coefficient -1, 0 or 1, from the top two bits' worth of a
    /// 30-bit random number times 3.
    static func smallRandom(_ random: RandomBytes) -> [Int8] {
        random32(random).map { Int8(((($0 & 0x3fff_ffff) * 3) >> 30)) - 1 }
    }

    /// A short polynomial: exactly w coefficients ±1, the rest 0, in random places. The w
    /// nonzero and p - w zero markers ride in the low two bits of random words, and sorting the
    /// words shuffles them.
    static func shortRandom(_ random: RandomBytes) -> [Int8] {
        var words = random32(random)
        for index in words.indices {
            words[index] = index < Sntrup761Ring.weight ? words[index] & ~1 : (words[index] & ~3) | 1
        }
        return ConstantTimeSort.sorted(words).map { Int8($0 & 3) - 1 }
    }
}
