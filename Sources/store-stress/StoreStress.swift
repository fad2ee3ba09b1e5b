#if canImport(Glibc)
import Glibc
#endif
import FleetTrustCore

/// Test helper: one of several processes writing one file at once through `GuardedFile`.
///
///     store-stress lines FILE PREFIX COUNT   appends COUNT lines "PREFIX-i LINE-TAIL", one write each
///     store-stress pins FILE PREFIX COUNT    pins COUNT hosts "PREFIX-i.example" with PinFileWriter
///     store-stress history FILE PREFIX COUNT records COUNT probes in the history store, one
///                                            transaction each, of 4 hosts shared by every writer
///
/// Each write re-reads the file and adds its line to what is there, as fleettrust does.
@main
enum StoreStress {
    static let keyTail = " ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKNVpLh/jJtEMGuMZHkgFkq6jkXKETMhrjGpsVTvO2Dc"

    static func complain(_ message: String) {
        let bytes = Array((message + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, let count = Int(arguments[4]) else {
            complain("usage: store-stress lines|pins|history FILE PREFIX COUNT")
            exit(2)
        }
        let (mode, path, prefix) = (arguments[1], arguments[2], arguments[3])
        do {
            let history = mode == "history" ? try HistoryStore.open(path: path) : nil
            for i in 0..<count {
                switch mode {
                case "lines":
                    let line = Array("\(prefix)-\(i)\(keyTail)\n".utf8)
                    let file = GuardedFile(path: path)
                    try file.update(from: try file.read()) { _, current in
                        var bytes = current
                        if let last = bytes.last, last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
                        return bytes + line
                    }
                case "pins":
                    let key = try HostKey(openSSHLine: String(keyTail.dropFirst()))
                    try PinFileWriter(path: path).addPin(patterns: "\(prefix)-\(i).example", fingerprints: [key.sha256Fingerprint])
                case "history":
                    let key = KeyIdentity(type: "ssh-ed25519", fingerprint: "SHA256:\(prefix)-\(i % 3)")
                    try history?.record([HistorySighting(host: "shared-\(i % 4)", lookup: "shared-\(i % 4)", endpoint: "127.0.0.1:22",
                                                         seenAt: HistoryTime.nowMilliseconds(), source: .scan, keys: [key], complete: true)])
                default:
                    complain("unknown mode \(mode)")
                    exit(2)
                }
            }
        } catch {
            complain("store-stress: \(error)")
            exit(1)
        }
    }
}
