/// The stage at which a probe failed, so that operators and programs can act on it.
///
/// Grouped by who owns it: the stages every probe passes through are common, and each protocol
/// owns the rest, so a probe reads only the common stages and its own and a new protocol adds a
/// group without touching the others. At the edge (JSON `stage`, messages) a stage is one word
/// of one flat set (`rawValue`), as before the grouping.
public enum ProbeStage: Hashable, Sendable {
    case common(CommonProbeStage)
    case ssh(SSHProbeStage)
    case tls(TLSProbeStage)

    public static let resolve = ProbeStage.common(.resolve)
    public static let connect = ProbeStage.common(.connect)
    public static let cancelled = ProbeStage.common(.cancelled)
    public static let proxy = ProbeStage.common(.proxy)
    public static let banner = ProbeStage.ssh(.banner)
    public static let keyExchange = ProbeStage.ssh(.keyExchange)
    public static let hostKey = ProbeStage.ssh(.hostKey)
    public static let tlsHandshake = ProbeStage.tls(.handshake)
}

/// The stages of every probe, whatever its protocol: finding the host, reaching it (directly or
/// through its route), and being stopped.
public enum CommonProbeStage: String, Hashable, Sendable, CaseIterable {
    case resolve, connect, cancelled
    /// A hop of the host's route (a bastion or a ProxyCommand) failed; nothing reached the host.
    case proxy
}

/// An SSH probe's own stages.
public enum SSHProbeStage: String, Hashable, Sendable, CaseIterable {
    case banner, keyExchange = "key-exchange"
    /// The keys were proved, but `ssh` could not use any it would meet (judged, not probed).
    case hostKey = "host-key"
}

/// A TLS probe's own stage (a STARTTLS upgrade included).
public enum TLSProbeStage: String, Hashable, Sendable, CaseIterable {
    /// The connection was made but the handshake (or the plain-text upgrade before it) did not complete.
    case handshake = "tls-handshake"
}

extension ProbeStage: RawRepresentable, CaseIterable, Codable {
    public init?(rawValue: String) {
        if let stage = CommonProbeStage(rawValue: rawValue) {
            self = .common(stage)
        } else if let stage = SSHProbeStage(rawValue: rawValue) {
            self = .ssh(stage)
        } else if let stage = TLSProbeStage(rawValue: rawValue) {
            self = .tls(stage)
        } else {
            return nil
        }
    }

    /// The stage's word at the edge.
    public var rawValue: String {
        switch self {
        case .common(let stage): stage.rawValue
        case .ssh(let stage): stage.rawValue
        case .tls(let stage): stage.rawValue
        }
    }

    /// Every stage, in the order the flat set listed them.
    public static let allCases: [ProbeStage] = [.resolve, .connect, .banner, .keyExchange, .cancelled, .proxy, .hostKey, .tlsHandshake]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let word = try container.decode(String.self)
        guard let stage = ProbeStage(rawValue: word) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "unknown probe stage \(word)")
        }
        self = stage
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
