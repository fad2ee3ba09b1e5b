import XCTest
import Glibc
import FleetTrustCore
@testable import FleetTrustSSH

final class ProbeFailuresTests: XCTestCase {
    // The exact text libssh 0.10.6 produced against OpenSSH 9.2 here.
    let noMatch = "kex error : no match for method server host key algo: server [ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256], client [ecdsa-sha2-nistp384]"

    func testServerHostKeyAlgorithmsAreReadFromLibsshNoMatchError() {
        XCTAssertEqual(ProbeFailures.serverHostKeyAlgorithms(inLibsshError: noMatch),
                       ["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256"])
        XCTAssertNil(ProbeFailures.serverHostKeyAlgorithms(
            inLibsshError: "kex error : no match for method kex algos: server [a], client [b]"))
        XCTAssertNil(ProbeFailures.serverHostKeyAlgorithms(inLibsshError: "Timeout connecting to 127.0.0.1"))
    }

    func testHandshakeErrorsAfterIdentificationAreKeyExchangeFailures() {
        func code(_ text: String) -> FailureCode {
            let failure = ProbeFailures.handshake(libsshError: text, serverIdentified: true, firstBytes: Array("SSH-2.0-x\r\n".utf8))
            XCTAssertEqual(failure.stage, .keyExchange, text)
            return failure.code
        }
        XCTAssertEqual(code(noMatch), .noCommonAlgorithm)
        XCTAssertEqual(code("Timeout connecting to 127.0.0.1"), .kexTimeout)
        XCTAssertEqual(code("Socket error: Connection reset by peer"), .connectionClosed)
        XCTAssertEqual(code("Socket error: disconnected"), .connectionClosed)
        XCTAssertEqual(code("Failed to verify the server signature"), .badSignature)
        XCTAssertEqual(code("something new"), .kexFailed)
    }

    /// When libssh fails a key type after our client did, the failure that got further with the
    /// server is the key type's: a connect or identification failure of libssh's own connection
    /// never hides that the server answered ours.
    func testTheFailureThatGotFurtherWithTheServerIsKept() {
        let ours = ProbeFailure(stage: .keyExchange, code: .noCommonAlgorithm, message: "no common key exchange algorithm")
        let refused = ProbeFailures.connect(errno: ECONNREFUSED)
        XCTAssertEqual(ProbeFailures.furthest(ours: ours, libssh: refused), ours)
        XCTAssertEqual(ProbeFailures.furthest(ours: ours, libssh: ProbeFailures.bannerTimeout), ours)
        XCTAssertEqual(ProbeFailures.furthest(ours: ours, libssh: ProbeFailures.closedBeforeBanner()), ours)
        let forged = ProbeFailure(stage: .keyExchange, code: .badSignature, message: "signature did not verify")
        XCTAssertEqual(ProbeFailures.furthest(ours: ours, libssh: forged), forged,
                       "libssh agreed the algorithms ours lacked and got further")
        XCTAssertEqual(ProbeFailures.furthest(ours: ProbeFailures.bannerTimeout, libssh: forged), forged)
        let theirsNoMatch = ProbeFailure(stage: .keyExchange, code: .noCommonAlgorithm, message: "no match")
        XCTAssertEqual(ProbeFailures.furthest(ours: ours, libssh: theirsNoMatch), ours, "a tie keeps ours")
        XCTAssertEqual(ProbeFailures.furthest(ours: ours, libssh: ProbeFailures.cancelled), ProbeFailures.cancelled)

        let merged = AttemptOutcome(failure: refused).afterFallback(from: AttemptOutcome(failure: ours, serverVersion: "SSH-2.0-x"))
        XCTAssertEqual(merged.failure, ours)
        XCTAssertEqual(merged.serverVersion, "SSH-2.0-x")
    }

    func testHandshakeErrorsBeforeIdentificationAreBannerFailures() {
        let notSSH = ProbeFailures.handshake(libsshError: "Timeout connecting to 127.0.0.1", serverIdentified: false,
                                             firstBytes: Array("220 mail.example ESMTP\r\n".utf8))
        XCTAssertEqual(notSSH.stage, .banner)
        XCTAssertEqual(notSSH.code, .notSSH)
        XCTAssertTrue(notSSH.message.value.contains("220 mail.example ESMTP"))
        let silent = ProbeFailures.handshake(libsshError: "Timeout connecting to 127.0.0.1", serverIdentified: false, firstBytes: [])
        XCTAssertEqual(silent.code, .bannerTimeout)
        let closed = ProbeFailures.handshake(libsshError: "Socket error: disconnected", serverIdentified: false, firstBytes: [])
        XCTAssertEqual(closed.code, .connectionClosed)
        XCTAssertEqual(closed.stage, .banner)
        let endless = ProbeFailures.handshake(libsshError: "Receiving banner: too large banner", serverIdentified: false,
                                              firstBytes: Array("SSH-2.0-aaaaaaaaaaaaaaaa".utf8))
        XCTAssertEqual(endless.code, .notSSH)
        let preBanner = ProbeFailures.handshake(libsshError: "Timeout connecting to 127.0.0.1", serverIdentified: false,
                                                firstBytes: Array("welcome\r\nSSH-2.0-slo".utf8))
        XCTAssertEqual(preBanner.code, .bannerTimeout, "lines before the identification are legal")
    }

    func testServerTextInFailuresIsSanitized() {
        let failure = ProbeFailures.notSSH(firstBytes: Array("\u{1b}[2J\u{1b}]52;c;evil\u{07}hello\r\n".utf8))
        XCTAssertFalse(failure.message.value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f })
        XCTAssertTrue(failure.message.value.contains("hello"))
    }

    func testConnectErrnoMapsToStableCodes() {
        XCTAssertEqual(ProbeFailures.connect(errno: ECONNREFUSED).code, .connectionRefused)
        XCTAssertEqual(ProbeFailures.connect(errno: EHOSTUNREACH).code, .hostUnreachable)
        XCTAssertEqual(ProbeFailures.connect(errno: ETIMEDOUT).code, .connectTimeout)
        XCTAssertEqual(ProbeFailures.connect(errno: ECONNREFUSED).stage, .connect)
    }
}
