/// Why a judged host is `unreachable` or `error`: the probe failed, or the probe proved keys and
/// the judge found that `ssh` would still not connect.
///
/// The two are different facts: a probe failure is what the network and the server did; a
/// refusal is the judge's conclusion from the keys, the host's settings and its trust files. They
/// read alike at the edge (a stage, a code, a sentence: the refusals have stage `host-key`), so the
/// JSON and the screens stay as they were, but nothing confuses a judgement with a probe result.
public enum HostFailure: Hashable, Sendable, CustomStringConvertible {
    /// The probe failed at its stage, and proved no key.
    case probe(ProbeFailure)
    /// The probe proved keys, and `ssh` could use none of the ones it would meet.
    case keyRefused(KeyRefusal)
    /// A file `ssh` reads for the host fails every connection: a `RevokedHostKeys` file it cannot
    /// use, a `KnownHostsCommand` that failed (the sentence says which).
    case trustSourceFailed(CleanText)

    public var stage: ProbeStage {
        if case .probe(let failure) = self { return failure.stage }
        return .hostKey
    }

    public var code: FailureCode {
        switch self {
        case .probe(let failure): return failure.code
        case .keyRefused(let refusal): return refusal.code
        case .trustSourceFailed: return .other
        }
    }

    /// One sentence for people.
    public var message: CleanText {
        switch self {
        case .probe(let failure): return failure.message
        case .keyRefused(let refusal): return CleanText(refusal.sentence, limit: 512)
        case .trustSourceFailed(let sentence): return sentence
        }
    }

    public var description: String { "\(stage.rawValue): \(message)" }

    /// The probe failure's shape (stage, code, sentence), for outputs that carry both kinds alike.
    public var asProbeFailure: ProbeFailure {
        if case .probe(let failure) = self { return failure }
        return ProbeFailure(stage: stage, code: code, message: message.value)
    }

    static func trustSource(_ sentence: String) -> HostFailure { .trustSourceFailed(CleanText(sentence, limit: 512)) }
}

/// Why `ssh` could use none of the keys a probe proved (stage `host-key`).
public enum KeyRefusal: Hashable, Sendable {
    /// The host's `HostKeyAlgorithms` setting selects no algorithm `ssh` knows: it would not start.
    case hostKeyAlgorithmsSelectNothing(setting: String)
    /// `ssh` offers no host-key algorithm the server has (the server's first twelve, as offered).
    case noCommonAlgorithm(serverOffers: [String])
    /// `ssh` would negotiate this algorithm, and the probe did not fetch its key.
    case negotiatedKeyNotProbed(algorithm: String)
    /// `ssh` would meet an RSA key shorter than it accepts.
    case rsaKeyTooShort(bits: Int, minimumBits: Int)

    public var code: FailureCode {
        switch self {
        case .hostKeyAlgorithmsSelectNothing, .noCommonAlgorithm: return .noMatchingHostKeyType
        case .negotiatedKeyNotProbed: return .negotiatedKeyNotProbed
        case .rsaKeyTooShort: return .rsaKeyTooShort
        }
    }

    public var sentence: String {
        switch self {
        case .hostKeyAlgorithmsSelectNothing(let setting):
            return "ssh would not start: HostKeyAlgorithms \(setting) selects no algorithm it knows"
        case .noCommonAlgorithm(let offers):
            return "ssh offers no host-key algorithm the server has (the server offers \(offers.joined(separator: ",")))"
        case .negotiatedKeyNotProbed(let algorithm):
            return "ssh would negotiate \(algorithm), and the probe did not fetch that key"
        case .rsaKeyTooShort(let bits, let minimum):
            return "ssh would meet a \(bits)-bit RSA key and refuse it (invalid key length; at least \(minimum) bits)"
        }
    }
}
