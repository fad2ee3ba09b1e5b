import Foundation
import XCTest
@testable import FleetTrustCore
import FleetTrustTestFleet

/// Real keys and real signatures over one message: keys made by `ssh-keygen`, signatures by
/// `ssh-keygen -Y sign` (its SSHSIG's signed data rebuilt), one rsa-sha2-256 by `openssl dgst` and
/// one by a certificate's key. What the verification benchmark times and the checks are held to.
struct SignedCorpus {
    struct Signed { let name: String, key: HostKey, signature: [UInt8], data: [UInt8] }

    /// Every key type `ssh-keygen` makes without a token, each with one valid signature.
    static func make(in directory: URL) throws -> [Signed] {
        let message = directory.appendingPathComponent("message")
        try Data("the exchange hash of a handshake\n".utf8).write(to: message)
        var all: [Signed] = []
        for (type, bits, name) in [("ed25519", "256", "ssh-ed25519"), ("ecdsa", "256", "ecdsa-sha2-nistp256"),
                                   ("ecdsa", "384", "ecdsa-sha2-nistp384"), ("ecdsa", "521", "ecdsa-sha2-nistp521"),
                                   ("rsa", "3072", "rsa-sha2-512 (3072 bits)")] {
            let path = directory.appendingPathComponent("\(type)-\(bits)").path
            _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-t", type, "-b", bits, "-N", "", "-f", path])
            try? FileManager.default.removeItem(atPath: message.path + ".sig")
            _ = try Tool.run("/usr/bin/ssh-keygen", ["-Y", "sign", "-f", path, "-n", "file", message.path])
            let armored = try String(contentsOfFile: message.path + ".sig", encoding: .utf8)
            let content = [UInt8](try Data(contentsOf: message))
            let file = try SSHSignatureFile(armored: armored, message: content)
            let key = file.key
            all.append(Signed(name: name, key: key, signature: file.signature, data: file.signedData))
            if type == "rsa" {
                _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-p", "-N", "", "-m", "PEM", "-f", path])
                let raw = directory.appendingPathComponent("rsa256.sig").path
                _ = try Tool.run("/usr/bin/openssl", ["dgst", "-sha256", "-sign", path, "-out", raw, message.path])
                var blob = SSHWireWriter()
                blob.writeString("rsa-sha2-256")
                blob.writeString([UInt8](try Data(contentsOf: URL(fileURLWithPath: raw))))
                all.append(Signed(name: "rsa-sha2-256 (3072 bits)", key: key, signature: blob.bytes, data: content))
            }
            if type == "ed25519" {
                let ca = directory.appendingPathComponent("ca").path
                _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", ca])
                _ = try Tool.run("/usr/bin/ssh-keygen", ["-q", "-s", ca, "-I", "bench", "-h", "-n", "web", path + ".pub"])
                let certificate = try HostKey(openSSHLine: String(contentsOfFile: path + "-cert.pub", encoding: .utf8))
                all.append(Signed(name: "ssh-ed25519 by a certificate's key", key: certificate, signature: file.signature, data: file.signedData))
            }
        }
        return all
    }
}
