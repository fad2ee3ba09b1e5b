import Foundation
import XCTest
@testable import FleetTrustCore

/// `Ciphers` and `MACs` as `ssh` 9.2 reads and applies them, with the real `ssh -G` as the oracle:
/// what the probe's connection shaped like `ssh`'s lists in its KEXINIT, and the values `ssh`
/// refuses are file:line errors.
final class TransportAlgorithmsTests: XCTestCase {
    /// What `ssh -G` prints for `keyword` under `-o keyword=value`, or nil when `ssh` refuses the value.
    private func sshG(_ keyword: String, _ value: String) throws -> [String]? {
        let ssh = Process()
        ssh.executableURL = URL(fileURLWithPath: "/usr/bin/ssh")
        ssh.arguments = ["-G", "-F", "/dev/null", "-o", "\(keyword)=\(value)", "web.invalid"]
        let out = Pipe()
        ssh.standardOutput = out
        ssh.standardError = FileHandle.nullDevice
        ssh.standardInput = FileHandle.nullDevice
        try ssh.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        ssh.waitUntilExit()
        guard ssh.terminationStatus == 0 else { return nil }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(keyword.lowercased() + " ") }
        return line.map { $0.dropFirst(keyword.count + 1).split(separator: ",").map(String.init) } ?? []
    }

    func testCiphersAndMACsAreAssembledAsSSHMinusGPrintsThem() throws {
        XCTAssertEqual(try sshG("Ciphers", "+3des-cbc").map { Array($0.dropLast()) }, TransportAlgorithms.openSSHDefaultCiphers,
                       "the defaults are the installed ssh's")
        for value in ["aes256-ctr", "+3des-cbc", "-chacha*", "^aes256-cbc", "-*", "aes256-ctr,,aes128-ctr", "-foo"] {
            XCTAssertEqual(TransportAlgorithms.ciphers(SSHAlgorithmList(value)), try sshG("Ciphers", value), value)
        }
        XCTAssertEqual(try sshG("MACs", "+hmac-md5").map { Array($0.dropLast()) }, TransportAlgorithms.openSSHDefaultMACs)
        for value in ["hmac-sha2-512", "+hmac-md5", "-umac*", "^hmac-sha1-96", "-*"] {
            XCTAssertEqual(TransportAlgorithms.macs(SSHAlgorithmList(value)), try sshG("MACs", value), value)
        }
    }

    func testValuesSSHRefusesAreFileLineErrorsAndTheOthersAreKeptForTheHost() throws {
        for refused in ["+foo", "aes*", "bogus"] { XCTAssertNil(try sshG("Ciphers", refused), refused) }
        let inventory = InventoryFixtures.read(text: """
        Host web
          Ciphers aes256-gcm@openssh.com,aes256-ctr
          MACs -umac*
        Host bad
          Ciphers aes*
        """, name: "cfg", format: .sshConfig)
        XCTAssertEqual(inventory.errors.map(\.description), ["cfg:5: Ciphers 'aes*' names no algorithm OpenSSH 9.2 knows ('aes*'); ignored"])
        XCTAssertEqual(inventory["web"].map { TransportAlgorithms.ciphers($0.sshOptions.ciphers) }, ["aes256-gcm@openssh.com", "aes256-ctr"])
        XCTAssertEqual(inventory["web"]?.sshOptions.macs, "-umac*")
        XCTAssertEqual(inventory["web"]?.sshOptions.commandLineOptions, ["-o", "Ciphers=aes256-gcm@openssh.com,aes256-ctr", "-o", "MACs=-umac*"])
    }
}
