import FleetTrustCore

/// A signature made by the real `ssh-keygen -Y sign`, taken apart into what a host-key check
/// reads: the signing key, the `string algorithm, string signature` blob, and the bytes it signs.
///
/// The tests of signature checks need signatures that OpenSSH itself made, and `ssh-keygen -Y
/// sign` is the one way to make `ssh-keygen` sign arbitrary bytes. Its SSHSIG file (PROTOCOL.sshsig)
/// signs "SSHSIG" || namespace || reserved || hash algorithm || H(message), each but the magic an
/// SSH string; that concatenation is what a verifier must be given.
public struct SSHSignatureFile: Sendable {
    public enum Failure: Error { case notArmored, notSSHSIG, unknownHash(String) }

    public let key: HostKey
    public let signature: [UInt8]
    public let signedData: [UInt8]

    /// `armored`: the `.sig` file's text; `message`: the bytes that were signed.
    public init(armored: String, message: [UInt8]) throws {
        let body = armored.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let sshsig = Base64.decode(body) else { throw Failure.notArmored }
        var reader = SSHWireReader(sshsig)
        guard try reader.readBytes(6) == Array("SSHSIG".utf8) else { throw Failure.notSSHSIG }
        _ = try reader.readUInt32()
        key = try HostKey(blob: try reader.readString())
        let namespace = try reader.readString(), reserved = try reader.readString(), hash = try reader.readUTF8()
        signature = try reader.readString()
        let digest: [UInt8]
        switch hash {
        case "sha512": digest = Digest.sha512(message)
        case "sha256": digest = Digest.sha256(message)
        default: throw Failure.unknownHash(hash)
        }
        var data = SSHWireWriter()
        data.writeRaw(Array("SSHSIG".utf8))
        for field in [namespace, reserved, Array(hash.utf8), digest] { data.writeString(field) }
        signedData = data.bytes
    }
}
