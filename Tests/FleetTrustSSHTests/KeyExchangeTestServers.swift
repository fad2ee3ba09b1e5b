import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// A real OpenSSH sshd on 127.0.0.1 with chosen host keys and certificates, stopped by PID.
final class KeyExchangeTestSSHD {
    struct HostKeySpec {
        var type: String
        var bits: String
        /// When set, a host certificate signed by a CA of this type (and RSA signature algorithm).
        var certificateCA: (type: String, bits: String, signWith: String?)?
    }

    let directory: URL
    private let logPath: String
    let port: Int
    private let process: SpawnedProcess
    /// Private key path for each spec, in order.
    let keyPaths: [String]
    /// The CA's private key path for each spec with a certificate.
    let caPaths: [String?]

    /// `logLevel`: sshd's, into its log (`connectionsAccepted` needs VERBOSE).
    init(keys: [HostKeySpec], extraConfig: [String] = [], logLevel: String = "ERROR") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ft-kex-sshd-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        logPath = directory.appendingPathComponent("sshd.log").path
        var config = ["ListenAddress 127.0.0.1", "PidFile none", "UsePAM no", "StrictModes no",
                      "AuthorizedKeysFile none", "LogLevel \(logLevel)"] + extraConfig
        var paths: [String] = [], cas: [String?] = []
        for (index, spec) in keys.enumerated() {
            let path = directory.appendingPathComponent("host\(index)-\(spec.type)").path
            try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", spec.type, "-b", spec.bits, "-N", "", "-f", path])
            config.append("HostKey \(path)")
            if let ca = spec.certificateCA {
                let caPath = directory.appendingPathComponent("ca\(index)-\(ca.type)").path
                try Tool.check("/usr/bin/ssh-keygen", ["-q", "-t", ca.type, "-b", ca.bits, "-N", "", "-f", caPath])
                var arguments = ["-q", "-s", caPath, "-I", "host\(index)-id", "-h", "-n", "web.example,127.0.0.1",
                                 "-z", String(100 + index), "-V", "20200101:20991231"]
                if let signWith = ca.signWith { arguments += ["-t", signWith] }
                try Tool.check("/usr/bin/ssh-keygen", arguments + [path + ".pub"])
                config.append("HostCertificate \(path)-cert.pub")
                cas.append(caPath)
            } else {
                cas.append(nil)
            }
            paths.append(path)
        }
        keyPaths = paths
        caPaths = cas
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        var started: (SpawnedProcess, Int)?
        for _ in 0..<5 where started == nil {
            let port = try Loopback.freePort()
            let configPath = directory.appendingPathComponent("sshd_config").path
            try (config + ["Port \(port)"]).joined(separator: "\n").appending("\n").write(toFile: configPath, atomically: true, encoding: .utf8)
            let process = try SpawnedProcess("/usr/sbin/sshd", ["-D", "-e", "-f", configPath], stderrPath: logPath)
            // Its own sshd listening, not another test's server on the same port.
            if waitForBanner(port: port) && Loopback.isListening(pid: process.pid, address: "127.0.0.1", port: port) {
                started = (process, port)
            } else {
                process.terminate()
            }
        }
        guard let started else { throw TestServerError.didNotStart("sshd") }
        (process, port) = started
    }

    deinit { stop() }

    func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The connections sshd has accepted so far, its readiness check's included: the "Connection
    /// from" lines it logs at VERBOSE, before it sends its identification.
    var connectionsAccepted: Int {
        // sshd -e ends its lines with CR LF, one Character to Swift.
        ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").split(whereSeparator: \.isNewline)
            .count { $0.hasPrefix("Connection from ") }
    }

    func publicKey(_ index: Int) throws -> HostKey {
        try HostKey(openSSHLine: String(contentsOfFile: keyPaths[index] + ".pub", encoding: .utf8))
    }

    func certificate(_ index: Int) throws -> HostKey {
        try HostKey(openSSHLine: String(contentsOfFile: keyPaths[index] + "-cert.pub", encoding: .utf8))
    }

    func caPublicKey(_ index: Int) throws -> HostKey {
        let path = try XCTUnwrap(caPaths[index])
        return try HostKey(openSSHLine: String(contentsOfFile: path + ".pub", encoding: .utf8))
    }
}

/// A fake SSH server in Python (`cryptography`), for peers that a real sshd will not imitate.
///
/// Modes: `honest` (a correct curve25519-sha256 exchange with an Ed25519 key, preceded by a
/// non-SSH line and an IGNORE message), `forge` (signs the wrong hash), `swap` (signs with a
/// different key than it presents), `silent` (accepts TCP, never speaks), `http` (reads the
/// request, answers as a web server and closes), `flood` (endless text lines), `ssh1` (SSH 1.5 only),
/// `stall` (stops after its KEXINIT), `oversize` (announces a 2 GiB packet), `disconnect`
/// (disconnects with a terminal escape in its reason), `zero-point` (an all-zero X25519 value),
/// `dribble` (honest, one byte per segment), `wrong-guess` (a wrong first-kex guess, with an IGNORE
/// before the guessed packet), `second-ident` (identifies itself twice), `reset` (RST after the
/// client's ECDH_INIT), `reply-and-close` (its reply and its FIN together), `client-first` (honest,
/// but speaks only once it has read the client's identification, which `ssh` sends at once).
/// Transport-rule modes, each honest but at one of OpenSSH's limits (`ssh` is the oracle against
/// them; they close after the client's NEWKEYS): `long-ident` (an 8008-byte identification),
/// `preamble-1023` / `preamble-1024` (that many lines before it), `kex-empty-element` (the only
/// common method after an empty name-list element), `kex-41` (the only common method 41st),
/// `kex-trailing-nul` (its method list ends in a NUL byte), `kex-inner-nul` (a NUL inside it),
/// `strict` (kex-strict-s, nothing before KEXINIT), `strict-noise` (kex-strict-s after an IGNORE),
/// `strict-late-noise` (kex-strict-s, an IGNORE before the reply), `decoy` (a wrong guess flagged,
/// then a valid reply by another key before the real one), `odd-message` (an unknown transport
/// message 40 before the reply), `late-kexinit` (a second KEXINIT before the reply), `high-message`
/// (message 60 before the reply, which no handler takes). Diffie-Hellman modes: `gex` (an honest
/// group exchange in RFC 3526's 2048-bit group), `gex-small-group` (a 1024-bit group, below what
/// was asked for), `dh-f-one` (group14 with the server's value f = 1, validly signed),
/// `reply-trailing` (two bytes after the reply's signature), `no-incoming-mac` (no MAC in common
/// for the server-to-client direction), `dh-padded-f` and `gex-padded-f` (f sent with a superfluous leading zero byte, hashed as OpenSSH
/// hashes it: as sent for a fixed group, re-encoded for a group exchange).
final class HostileSSHServer {
    let port: Int
    /// The host key it presents.
    let hostKey: HostKey
    private let process: SpawnedProcess

    init(mode: String) throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("ft-hostile-\(getpid())-\(UUID().uuidString)").path
        try Self.script.write(toFile: base + ".py", atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: base + ".py") }
        defer { try? FileManager.default.removeItem(atPath: base + ".out") }
        process = try SpawnedProcess("/usr/bin/python3", [base + ".py", mode], stderrPath: base + ".out")
        var lines: [Substring] = []
        for _ in 0..<400 where lines.count < 2 && process.isRunning {
            usleep(25_000)
            lines = ((try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "").split(separator: "\n")
        }
        guard lines.count >= 2, let port = Int(lines[0]), let key = try? HostKey(openSSHLine: lines[1]) else {
            process.terminate()
            throw TestServerError.didNotStart("hostile server \(mode)")
        }
        self.port = port
        self.hostKey = key
    }

    deinit { stop() }

    func stop() { process.terminate() }

    private static let script = #"""
import base64, hashlib, os, socket, struct, sys, threading, time
from cryptography.hazmat.primitives.asymmetric import ed25519, x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

mode = sys.argv[1]
def s(b): return struct.pack(">I", len(b)) + b
def mpint(b):
    b = b.lstrip(b"\0")
    return s(b"\0" + b if b and b[0] & 0x80 else b)
def blob(key): return s(b"ssh-ed25519") + s(key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
def frame(payload):
    pad = 8 - (5 + len(payload)) % 8
    if pad < 4: pad += 8
    return struct.pack(">IB", 1 + len(payload) + pad, pad) + payload + os.urandom(pad)
def read_exact(f, n):
    data = f.read(n)
    if len(data) != n: raise EOFError
    return data
def read_packet(f):
    length, pad = struct.unpack(">IB", read_exact(f, 5))
    return read_exact(f, length - 1)[: length - 1 - pad]

import ctypes
libcrypto = ctypes.CDLL("libcrypto.so.3")
def openssl_prime(name):
    getter = getattr(libcrypto, name)
    getter.restype, getter.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
    libcrypto.BN_bn2hex.restype, libcrypto.BN_bn2hex.argtypes = ctypes.c_char_p, [ctypes.c_void_p]
    return int(libcrypto.BN_bn2hex(getter(None)), 16)
def mpint_int(n): return mpint(n.to_bytes((n.bit_length() + 7) // 8 or 1, "big"))
def read_mpint(data, offset):
    n = struct.unpack(">I", data[offset:offset + 4])[0]
    return int.from_bytes(data[offset + 4:offset + 4 + n], "big"), offset + 4 + n

host_key = ed25519.Ed25519PrivateKey.generate()
other_key = ed25519.Ed25519PrivateKey.generate()
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(16)
sys.stderr.write("%d\nssh-ed25519 %s\n" % (server.getsockname()[1], base64.b64encode(blob(host_key)).decode()))
sys.stderr.flush()

def await_newkeys(conn, f):
    # The client's NEWKEYS ends a transport-rule case: ssh has decided by then; close.
    conn.settimeout(3)
    try:
        while read_packet(f)[:1] != bytes([21]): pass
    except Exception:
        pass

def handle(conn):
    if mode == "silent":
        while conn.recv(4096): pass
        return
    if mode == "flood":
        while True: conn.sendall(b"x" * 100 + b"\r\n")
    if mode == "ssh1":
        conn.sendall(b"SSH-1.5-OldServer\r\n")
        while conn.recv(4096): pass
        return
    if mode == "http":
        conn.recv(65536)
        conn.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        return
    def send(data):
        if mode != "dribble": return conn.sendall(data)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(data)):
            conn.sendall(data[i:i + 1])
            time.sleep(0.0005)
    f = conn.makefile("rb")
    v_s = b"SSH-2.0-" + b"x" * 8000 if mode == "long-ident" else b"SSH-2.0-Hostile_1.0"
    preamble = b"hello operator\r\n"
    if mode.startswith("preamble-"): preamble = b"line\r\n" * int(mode[9:])
    if mode == "client-first":
        v_c = f.readline().rstrip(b"\r\n")
    send(preamble + v_s + b"\r\n" + (v_s + b"\r\n" if mode == "second-ident" else b""))
    if mode != "client-first":
        v_c = f.readline().rstrip(b"\r\n")
    i_c = read_packet(f)
    if mode == "oversize":
        conn.sendall(struct.pack(">IB", 0x7fffffff, 4))
        while conn.recv(4096): pass
        return
    if mode == "disconnect":
        conn.sendall(frame(bytes([1]) + struct.pack(">I", 3) + s(b"no matching host key type\x1b[2J") + s(b"")))
        return
    guess = mode in ("wrong-guess", "decoy")
    kex = {"kex-empty-element": b"curve9999-sha256,,curve25519-sha256",
           "kex-trailing-nul": b"curve25519-sha256\0", "kex-inner-nul": b"curve25519-sha256\0,curve25519-sha256",
           "kex-41": b",".join(b"x%d-sha256" % i for i in range(40)) + b",curve25519-sha256"}.get(mode, b"curve25519-sha256")
    if guess: kex = b"ecdh-sha2-nistp256," + kex
    if mode.startswith("strict"): kex += b",kex-strict-s-v00@openssh.com"
    if mode.startswith("gex"): kex = b"diffie-hellman-group-exchange-sha256"
    if mode.startswith("dh-"): kex = b"diffie-hellman-group14-sha256"
    lists = [kex, b"ssh-ed25519",
             b"aes128-ctr", b"aes128-ctr", b"hmac-sha2-256", b"hmac-none-such" if mode == "no-incoming-mac" else b"hmac-sha2-256",
             b"none", b"none", b"", b""]
    i_s = bytes([20]) + os.urandom(16) + b"".join(s(x) for x in lists) + (b"\1" if guess else b"\0") + struct.pack(">I", 0)
    guessed = frame(bytes([2]) + s(b"before the guess")) + frame(bytes([30]) + s(os.urandom(65))) if mode == "wrong-guess" else b""
    noise = b"" if mode == "strict" or mode == "strict-late-noise" else frame(bytes([2]) + s(b"noise"))
    send(noise + frame(i_s) + guessed)
    if mode == "stall":
        while conn.recv(4096): pass
        return
    if mode.startswith("gex") or mode.startswith("dh-"):
        p, g, prefix = openssl_prime("BN_get_rfc3526_prime_2048"), 2, b""
        if mode.startswith("gex"):
            request = read_packet(f)
            while request[:1] != bytes([34]): request = read_packet(f)
            if mode == "gex-small-group": p = openssl_prime("BN_get_rfc2409_prime_1024")
            send(frame(bytes([31]) + mpint_int(p) + mpint_int(g)))
            prefix = request[1:13] + mpint_int(p) + mpint_int(g)
        init = read_packet(f)
        while init[:1] not in (bytes([30]), bytes([32])): init = read_packet(f)
        e, _ = read_mpint(init, 1)
        y = int.from_bytes(os.urandom(64), "big")
        f_value, k_value = (1, 1) if mode == "dh-f-one" else (pow(g, y, p), pow(e, y, p))
        k_s = blob(host_key)
        f_wire = s(b"\0" + mpint_int(f_value)[4:]) if mode.endswith("padded-f") else mpint_int(f_value)
        f_hashed = mpint_int(f_value) if mode.startswith("gex") else f_wire
        h = hashlib.sha256(s(v_c) + s(v_s) + s(i_c) + s(i_s) + s(k_s) + prefix + mpint_int(e) + f_hashed
                           + mpint_int(k_value)).digest()
        reply = bytes([33 if mode.startswith("gex") else 31]) + s(k_s) + f_wire + s(s(b"ssh-ed25519") + s(host_key.sign(h)))
        send(frame(reply) + frame(bytes([21])))
        return await_newkeys(conn, f)
    init = read_packet(f)
    if mode == "reset":
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        return
    q_c = init[5:5 + struct.unpack(">I", init[1:5])[0]]
    ephemeral = x25519.X25519PrivateKey.generate()
    q_s = ephemeral.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    k = ephemeral.exchange(x25519.X25519PublicKey.from_public_bytes(q_c))
    if mode == "zero-point":
        q_s = bytes(32)
    def reply(key, forge=False, signer=None):
        k_s = blob(key)
        h = hashlib.sha256(s(v_c) + s(v_s) + s(i_c) + s(i_s) + s(k_s) + s(q_c) + s(q_s) + mpint(k)).digest()
        signature = s(b"ssh-ed25519") + s((signer or key).sign(hashlib.sha256(h).digest() if forge else h))
        return frame(bytes([31]) + s(k_s) + s(q_s) + s(signature) + (b"\0\0" if mode == "reply-trailing" else b""))
    before = {"decoy": reply(other_key), "strict-late-noise": frame(bytes([2]) + s(b"late noise")),
              "odd-message": frame(bytes([40]) + s(b"unknown")), "late-kexinit": frame(i_s),
              "high-message": frame(bytes([60]) + s(b"no handler"))}.get(mode, b"")
    send(before + reply(host_key, forge=mode == "forge", signer=other_key if mode == "swap" else None) + frame(bytes([21])))
    if mode == "reply-and-close": return
    if mode in ("long-ident", "preamble-1023", "preamble-1024", "kex-empty-element", "kex-41", "kex-trailing-nul", "strict",
                "strict-noise", "strict-late-noise", "decoy", "odd-message", "late-kexinit", "high-message"):
        return await_newkeys(conn, f)
    while conn.recv(4096): pass

def serve(conn):
    try:
        handle(conn)
    except Exception:
        pass
    finally:
        conn.close()

while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""#
}

enum TestServerError: Error {
    case didNotStart(String)
}

private func waitForBanner(port: Int) -> Bool {
    for _ in 0..<100 {
        if let fd = Loopback.connectedSocket(port: port) {
            var buffer = [UInt8](repeating: 0, count: 4)
            let ready = recv(fd, &buffer, 4, Int32(MSG_WAITALL)) == 4
            close(fd)
            if ready && buffer == Array("SSH-".utf8) { return true }
        }
        usleep(50_000)
    }
    return false
}
