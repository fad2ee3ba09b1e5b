import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Real TLS servers for tests and benchmarks: certificates made with the `openssl` CLI (a test
/// root CA, an intermediate, leaves with chosen names, keys and validity) and served by
/// `openssl s_server` on loopback ports, each stopped by its PID.
public final class TLSTestLab: @unchecked Sendable {
    public let directory: String
    private var servers: [(port: Int, process: SpawnedProcess)] = []
    private var serial = 1

    public init() throws {
        directory = NSTemporaryDirectory() + "tls-lab-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try write("index.txt", "")
        try write("ca.cnf", """
            [ca]
            default_ca = lab
            [lab]
            database = \(directory)/index.txt
            new_certs_dir = \(directory)
            serial = \(directory)/serial
            default_md = sha256
            policy = any
            unique_subject = no
            copy_extensions = none
            [any]
            commonName = supplied

            """)
    }

    /// Stops every server (by PID) and removes the files.
    public func stop() {
        servers.forEach { $0.process.terminate() }
        servers = []
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }

    public func path(_ name: String) -> String { directory + "/" + name }

    /// A new P-256 key at `name.key`.
    public func key(_ name: String) throws {
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path(name + ".key")])
    }

    /// A self-signed certificate `name.pem` for key `key` (a CA when `ca`), naming `dnsNames`.
    public func selfSigned(_ name: String, key: String, subject: String, dnsNames: [String] = [], ca: Bool = false, days: Int = 3650) throws {
        var arguments = ["req", "-x509", "-new", "-key", path(key + ".key"), "-out", path(name + ".pem"), "-days", "\(days)",
                         "-subj", "/CN=\(subject)", "-set_serial", "\(nextSerial())"]
        if ca { arguments += ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"] }
        if !dnsNames.isEmpty { arguments += ["-addext", "subjectAltName=" + dnsNames.map { "DNS:\($0)" }.joined(separator: ",")] }
        try openssl(arguments)
    }

    /// A certificate `name.pem` for key `key`, signed by `issuer` (its `.pem` and `.key`), valid
    /// from `start` to `end` (`YYYYMMDDHHMMSSZ`), naming `dnsNames` (or a CA when `ca`).
    public func signed(_ name: String, key: String, subject: String, by issuer: String, dnsNames: [String] = [], ca: Bool = false,
                       start: String? = nil, end: String? = nil, days: Int = 365, extensions more: [String] = []) throws {
        try openssl(["req", "-new", "-key", path(key + ".key"), "-subj", "/CN=\(subject)", "-out", path(name + ".csr")])
        var extensions = "[ext]\n"
        if ca { extensions += "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n" }
        if !dnsNames.isEmpty { extensions += "subjectAltName=" + dnsNames.map { "DNS:\($0)" }.joined(separator: ",") + "\n" }
        extensions += more.map { $0 + "\n" }.joined()
        try write(name + ".ext", extensions)
        try write("serial", String(format: "%04X\n", nextSerial()))
        var arguments = ["ca", "-batch", "-notext", "-config", path("ca.cnf"), "-cert", path(issuer + ".pem"), "-keyfile", path(issuer + ".key"),
                         "-in", path(name + ".csr"), "-out", path(name + ".pem"), "-extfile", path(name + ".ext"), "-extensions", "ext"]
        if let start { arguments += ["-startdate", start] }
        if let end { arguments += ["-enddate", end] } else { arguments += ["-days", "\(days)"] }
        try openssl(arguments)
    }

    /// A test root CA (`root.pem`, key `root`) and, signed by it, each leaf certificate `name`
    /// of key `key` naming `dnsName`: the lab most endpoint tests need (keys made as needed).
    public func rootCA(subject: String, signing leaves: [(name: String, key: String, dnsName: String)]) throws {
        for key in Set(["root"] + leaves.map(\.key)) { try self.key(key) }
        try selfSigned("root", key: "root", subject: subject, ca: true)
        for leaf in leaves { try signed(leaf.name, key: leaf.key, subject: leaf.dnsName, by: "root", dnsNames: [leaf.dnsName]) }
    }

    /// `pin-sha256` of a certificate's key as the openssl CLI computes it (the oracle for ours).
    public func spkiPin(_ certificate: String) throws -> String {
        let run = try ProgramRun.run("/bin/sh", ["-c", "openssl x509 -in '\(path(certificate + ".pem"))' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"])
        guard run.status == 0 else { throw TestFleetError.toolFailed("openssl spki pin: \(run.stderrText)") }
        return run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Serves `certificate` (with its key `key`, intermediates in `chain`) on `port`, else a free
    /// loopback port; with `sni`, serves `sni.certificate` to clients asking for `sni.name`.
    /// Returns once the port accepts.
    @discardableResult
    public func serve(certificate: String, key: String, chain: String? = nil,
                      sni: (name: String, certificate: String, key: String)? = nil, port: Int? = nil) throws -> Int {
        let port = try port ?? Loopback.freePort()
        var arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", path(certificate + ".pem"), "-key", path(key + ".key"),
                         "-quiet", "-no_dhe"]
        if let chain { arguments += ["-cert_chain", path(chain + ".pem")] }
        if let sni {
            arguments += ["-servername", sni.name, "-cert2", path(sni.certificate + ".pem"), "-key2", path(sni.key + ".key")]
        }
        let server = try SpawnedProcess("/usr/bin/openssl", arguments, stderrPath: path("s_server-\(port).log"))
        servers.append((port, server))
        let deadline = Date().addingTimeInterval(20)
        while !Loopback.accepts(address: "127.0.0.1", port: port) {
            guard server.isRunning, Date() < deadline else {
                let log = (try? String(contentsOfFile: path("s_server-\(port).log"), encoding: .utf8)) ?? ""
                throw TestFleetError.toolFailed("openssl s_server on port \(port) did not start: \(log)")
            }
            usleep(20_000)
        }
        return port
    }

    /// Stops (by PID) the server on `port`, so that another can serve there: one endpoint seen
    /// with another certificate.
    public func stopServing(port: Int) {
        servers.filter { $0.port == port }.forEach { $0.process.terminate() }
        servers.removeAll { $0.port == port }
    }

    public func write(_ name: String, _ text: String) throws {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
    }

    private func nextSerial() -> Int {
        serial += 1
        return serial
    }

    private func openssl(_ arguments: [String]) throws {
        let run = try ProgramRun.run("/usr/bin/openssl", arguments, limit: 60)
        guard run.status == 0 else {
            throw TestFleetError.toolFailed("openssl \(arguments.prefix(2).joined(separator: " ")): \(run.stderrText)")
        }
    }
}
