import Glibc
import FleetTrustCore

/// The `ProbeFailure`s the key-exchange client reports, so that each stable code is spelled once.
enum KeyExchangeFailures {
    static func transport(_ error: TransportSocket.Failure, stage: ProbeStage) -> ProbeFailure {
        switch error {
        case .timeout:
            return stage == .banner
                ? ProbeFailure(stage: .banner, code: .bannerTimeout,
                               message: "the port accepted TCP but sent no SSH identification within the timeout")
                : ProbeFailure(stage: stage, code: .kexTimeout, message: "the key exchange did not finish within the timeout")
        case .closed:
            return ProbeFailure(stage: stage, code: .connectionClosed, message: "the server closed the connection")
        case .system(let code):
            return ProbeFailure(stage: stage, code: .connectionClosed,
                                message: "the connection failed: \(String(cString: strerror(code)))")
        case .lineTooLong:
            return ProbeFailure(stage: stage, code: .notSSH, message: "the server sent an overlong line")
        }
    }

    /// A connection opened to ask for a key type, when every type was already asked for on others.
    static let notNeeded = ProbeFailure(stage: .keyExchange, code: .kexFailed,
                                        message: "key exchange not needed: every key type was asked for on another connection")

    static func kexFailed(_ why: String) -> ProbeFailure {
        ProbeFailure(stage: .keyExchange, code: .kexFailed, message: "key exchange failed: \(why)")
    }

    /// `what`: the list with nothing in common, as `KexInit.negotiate` names it (`key exchange`,
    /// `host key`, one of `transportLists`).
    static func noCommonAlgorithm(_ what: String, server: [String]) -> ProbeFailure {
        let offered = server.prefix(12).map { Sanitizer.clean($0, limit: 64) }.joined(separator: ",")
        return ProbeFailure(stage: .keyExchange, code: .noCommonAlgorithm,
                            message: "\(nothingInCommon(what)); the server offers \(offered.isEmpty ? "none" : offered)")
    }

    /// The lists of the transport, as `KexInit.negotiate` names them: our client offers `ssh`'s
    /// for the host (SSHShapedTransportTests holds a MAC mismatch to `ssh`'s answer).
    static let transportLists = ["cipher", "MAC", "compression"]

    private static func nothingInCommon(_ what: String) -> String { "no common \(what) algorithm" }

    /// Whether `failure` is no cipher, MAC or compression in common (`KexInit.negotiate`): our
    /// client offers `ssh`'s lists for the host, so that is `ssh`'s answer too, not a gap of ours.
    static func isTransportMismatch(_ failure: ProbeFailure) -> Bool {
        failure.code == .noCommonAlgorithm && transportLists.contains { failure.message.value.hasPrefix(nothingInCommon($0)) }
    }

    static func badSignature(_ why: String) -> ProbeFailure {
        ProbeFailure(stage: .keyExchange, code: .badSignature,
                     message: "the server did not prove it holds the host key: \(why)")
    }

    /// SSH_MSG_DISCONNECT from the server; reason 3 is "key exchange failed".
    static func disconnected(reason: UInt32, description: [UInt8], stage: ProbeStage) -> ProbeFailure {
        let text = "the server disconnected: \(Sanitizer.clean(bytes: description, limit: 200))"
        return ProbeFailure(stage: stage, code: reason == 3 ? .kexFailed : .connectionClosed, message: text)
    }
}
