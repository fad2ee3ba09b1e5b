import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One host key a `FakeKeyServer` serves: what it presents as K_S, the key that signs the
/// exchange hash, and the host-key algorithm names it is offered under.
public struct FakeHostKey: Sendable {
    /// OpenSSH private key file (made by ssh-keygen, no passphrase) whose key signs the exchange hash.
    /// A PEM (PKCS#1 or PKCS#8) key also works, for RSA sizes ssh-keygen refuses to make.
    public var privateKeyPath: String
    /// Bytes sent as K_S (the host key blob): the plain public key, or a certificate blob — possibly
    /// forged (bad CA signature), undecodable, a user certificate, relabelled, etc.
    public var presentedBlob: [UInt8]
    /// Host-key algorithm names this key is offered under in the server's KEXINIT, e.g.
    /// ["ssh-ed25519"], ["rsa-sha2-512","rsa-sha2-256"], ["ssh-rsa"] (SHA-1 only),
    /// ["ssh-ed25519-cert-v01@openssh.com"], ["rsa-sha2-512-cert-v01@openssh.com","rsa-sha2-256-cert-v01@openssh.com"].
    public var algorithms: [String]
    /// The form of its signatures over the exchange hash.
    public var signatureForm: SignatureForm = .standard

    /// How the key's signature over the exchange hash is written.
    public enum SignatureForm: String, Sendable {
        /// As OpenSSH's sshd writes it.
        case standard
        /// Forms OpenSSH accepts and RFC 8032 and SEC 1 do not: an Ed25519 S + L (OpenSSH's ref10
        /// takes S modulo L), ECDSA r and s each with a needless leading zero byte
        /// (`sshbuf_get_bignum2` skips it).
        case openSSHLoose = "openssh-loose"
        /// A byte after the signature inside the signature blob: `ssh` refuses it ("unexpected
        /// bytes remain"), libssh 0.10 reads past it.
        case trailingByte = "trailing-byte"
        /// A security key's ECDSA signature made through WebAuthn (`webauthn-sk-ecdsa-sha2-nistp256@openssh.com`):
        /// the token signed the hash of a clientData binding the exchange hash, which `ssh` accepts.
        case webauthn
        /// As `webauthn`, its clientData binding another challenge: `ssh` refuses it.
        case webauthnOtherChallenge = "webauthn-other-challenge"
    }

    public init(privateKeyPath: String, presentedBlob: [UInt8], algorithms: [String]) {
        self.privateKeyPath = privateKeyPath
        self.presentedBlob = presentedBlob
        self.algorithms = algorithms
    }

    /// The plain key of `privateKeyPath` (read from its `.pub` file), offered under `algorithms`.
    public static func plain(_ privateKeyPath: String, algorithms: [String]) throws -> FakeHostKey {
        FakeHostKey(privateKeyPath: privateKeyPath, presentedBlob: try KeyFiles.blob(publicKeyFile: privateKeyPath + ".pub"),
                    algorithms: algorithms)
    }

    /// The certificate in `certificatePath` (an OpenSSH `-cert.pub` file), the exchange signed by `privateKeyPath`.
    public static func certificate(_ privateKeyPath: String, certificatePath: String, algorithms: [String]) throws -> FakeHostKey {
        FakeHostKey(privateKeyPath: privateKeyPath, presentedBlob: try KeyFiles.blob(publicKeyFile: certificatePath),
                    algorithms: algorithms)
    }
}

/// A fake SSH server (Python 3 with `cryptography`, run as its own process and stopped by PID)
/// that serves whatever host keys it is given, including what a stock sshd refuses to serve:
/// forged, undecodable, relabelled or user certificates, certificates `cert_parse` refuses (a NUL in the
/// key id, an RSA-768 CA), SHA-1-only RSA, RSA keys under 1024 bits, zero-padded RSA keys (`OddKeys`),
/// and security-key host keys and their certificates (`KeyFiles.securityKey`), signed as a token signs.
///
/// It sends its identification and a KEXINIT offering `curve25519-sha256` (and the libssh.org
/// name) and the union of the keys' algorithms, in order; negotiates the host-key algorithm as
/// RFC 4253 says (the first in the *client's* list that the server has; none: SSH_MSG_DISCONNECT
/// and close); answers KEX_ECDH_INIT with the chosen key's presented blob and a signature over the
/// exchange hash made with its private key, with the signature algorithm the negotiated host-key
/// algorithm implies (`rsa-sha2-512` for `rsa-sha2-512` and `rsa-sha2-512-cert-v01@openssh.com`,
/// `ssh-rsa` = SHA-1, ECDSA per curve, Ed25519); then sends NEWKEYS, waits briefly for the
/// client's NEWKEYS and its first packet, and closes without sending anything encrypted. One
/// thread per connection; clients that leave early are fine. Works with OpenSSH 9.2's `ssh`,
/// libssh 0.10 and the project's own key-exchange client.
public final class FakeKeyServer: @unchecked Sendable {
    /// The port it listens on, the same on every address.
    public let port: Int
    public let addresses: [String]
    /// The server process's id.
    public var pid: pid_t { process.pid }
    private let process: SpawnedProcess
    private let directory: String

    public convenience init(keys: [FakeHostKey], address: String = "127.0.0.1") throws {
        try self.init(keys: keys, addresses: [address])
    }

    /// One server listening on several loopback addresses (one port for all), so that many test
    /// cases, each under its own host address, share one process. `kexInitAfterClient`: it sends
    /// its KEXINIT only once it has read the client's (as some servers do; RFC 4253 allows it).
    public init(keys: [FakeHostKey], addresses: [String], kexInitAfterClient: Bool = false) throws {
        precondition(!keys.isEmpty && !addresses.isEmpty, "a fake server needs keys and an address")
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ft-fake-\(getpid())-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config: [String: Any] = [
            "addresses": addresses,
            "keys": keys.map { ["private": $0.privateKeyPath, "blob": Data($0.presentedBlob).base64EncodedString(),
                                "algorithms": $0.algorithms, "form": $0.signatureForm.rawValue] as [String: Any] },
            "kexinit_after_client": kexInitAfterClient,
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: directory + "/config.json"))
        try Self.script.write(toFile: directory + "/server.py", atomically: true, encoding: .utf8)
        let log = directory + "/stderr"
        let process = try SpawnedProcess("/usr/bin/python3", [directory + "/server.py", directory + "/config.json"], stderrPath: log)
        var port: Int?
        for _ in 0..<750 where port == nil {
            usleep(20_000)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let newline = text.firstIndex(of: "\n") { port = Int(text[..<newline]) }
            if port == nil && !process.isRunning { break }
        }
        guard let port else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            process.terminate(grace: 1)
            try? FileManager.default.removeItem(atPath: directory)
            throw TestFleetError.toolFailed("fake key server did not start: \(text.suffix(2000))")
        }
        self.process = process
        self.port = port
        self.addresses = addresses
    }

    deinit { stop() }

    /// Stops the server process by its PID (SIGTERM, then SIGKILL) and removes its files; idempotent.
    public func stop() {
        process.terminate(grace: 2)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// What the server wrote on standard error after its port (Python tracebacks), for diagnosis.
    public var log: String {
        let text = (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? ""
        return text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().joined()
    }

    static let script = #"""
# FakeKeyServer: serves the host keys in the JSON file argv[1]; prints its port on stderr.
import base64, hashlib, json, os, socket, struct, sys, threading
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, padding, rsa, utils, x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

config = json.load(open(sys.argv[1]))

def s(b):
    if isinstance(b, str): b = b.encode()
    return struct.pack(">I", len(b)) + b
def mpint_bytes(b):
    b = b.lstrip(b"\0")
    return s(b"\0" + b if b and b[0] & 0x80 else b)
def mpint(n):
    return mpint_bytes(n.to_bytes((n.bit_length() + 7) // 8 or 1, "big"))
def frame(payload):
    pad = 8 - (5 + len(payload)) % 8
    if pad < 4: pad += 8
    return struct.pack(">IB", 1 + len(payload) + pad, pad) + payload + os.urandom(pad)
def read_exact(f, n):
    data = f.read(n)
    if data is None or len(data) != n: raise EOFError
    return data
def read_packet(f):
    length, pad = struct.unpack(">IB", read_exact(f, 5))
    if length > 256 * 1024 or length < pad + 1: raise EOFError
    return read_exact(f, length - 1)[: length - 1 - pad]
def name_list(data, offset):
    n = struct.unpack(">I", data[offset:offset + 4])[0]
    return [x for x in data[offset + 4:offset + 4 + n].decode("ascii", "replace").split(",") if x], offset + 4 + n

def load_private(path):
    data = open(path, "rb").read()
    try:
        return serialization.load_ssh_private_key(data, None)
    except Exception:
        return serialization.load_pem_private_key(data, None)

keys = []
for entry in config["keys"]:
    keys.append({"private": load_private(entry["private"]), "blob": base64.b64decode(entry["blob"]),
                 "algorithms": entry["algorithms"], "form": entry.get("form", "standard")})
offered = []
by_algorithm = {}
for key in keys:
    for name in key["algorithms"]:
        if name not in by_algorithm:
            by_algorithm[name] = key
            offered.append(name)

def sk_application(blob):
    # The application string of a security-key blob (plain or certificate): after the public fields.
    fields, offset = [], 0
    while offset + 4 <= len(blob):
        n = struct.unpack(">I", blob[offset:offset + 4])[0]
        fields.append(blob[offset + 4:offset + 4 + n])
        offset += 4 + n
    skip = 1 if fields[0].endswith(b"-cert-v01@openssh.com") else 0
    return fields[2 + skip] if fields[0].startswith(b"sk-ssh-ed25519") else fields[3 + skip]

ED25519_L = 2**252 + 27742317777372353535851937790883648493
def ed25519_signature(signature, loose):
    # Loose: S + L, which OpenSSH's ref10 takes modulo L (it checks only S's top three bits).
    if not loose: return signature
    plus = int.from_bytes(signature[32:], "little") + ED25519_L
    return signature[:32] + plus.to_bytes(32, "little") if plus < 2**253 else signature
def ecdsa_scalars(r, s_, loose):
    # Loose: each mpint with a needless leading zero byte, which sshbuf_get_bignum2 skips.
    if not loose: return mpint(r) + mpint(s_)
    return b"".join(s(b"\0" + mpint(n)[4:]) for n in (r, s_))

def sign(private, algorithm, data, blob=b"", loose=False, webauthn=None):
    # The signature over the exchange hash: its algorithm follows the key type, and for RSA the negotiated name.
    base = algorithm[: -len("-cert-v01@openssh.com")] if algorithm.endswith("-cert-v01@openssh.com") else algorithm
    if base.startswith("sk-"):
        # A security key signs SHA-256(application) || flags || counter || SHA-256(data); flags 0: no
        # user presence, which ssh does not ask of a host key.
        flags, counter = 0, 7
        signed = hashlib.sha256(sk_application(blob)).digest() + bytes([flags]) + struct.pack(">I", counter) + hashlib.sha256(data).digest()
        tail = bytes([flags]) + struct.pack(">I", counter)
        if isinstance(private, ed25519.Ed25519PrivateKey):
            return s(b"sk-ssh-ed25519@openssh.com") + s(ed25519_signature(private.sign(signed), loose)) + tail
        if webauthn:
            # A browser's WebAuthn signs SHA-256(clientData) in the data's place; clientData binds
            # the data (base64url, unpadded) as its challenge. "other": another challenge.
            challenge = base64.urlsafe_b64encode(data if webauthn != "other" else bytes([data[0] ^ 1]) + data[1:]).rstrip(b"=")
            origin = b"https://fleettrust.test"
            client = b'{"type":"webauthn.get","challenge":"' + challenge + b'","origin":"' + origin + b'","crossOrigin":false}'
            signed = hashlib.sha256(sk_application(blob)).digest() + tail + hashlib.sha256(client).digest()
            r, s_ = utils.decode_dss_signature(private.sign(signed, ec.ECDSA(hashes.SHA256())))
            return s(b"webauthn-sk-ecdsa-sha2-nistp256@openssh.com") + s(mpint(r) + mpint(s_)) + tail + s(origin) + s(client) + s(b"")
        r, s_ = utils.decode_dss_signature(private.sign(signed, ec.ECDSA(hashes.SHA256())))
        return s(b"sk-ecdsa-sha2-nistp256@openssh.com") + s(ecdsa_scalars(r, s_, loose)) + tail
    if isinstance(private, ed25519.Ed25519PrivateKey):
        return s(b"ssh-ed25519") + s(ed25519_signature(private.sign(data), loose))
    if isinstance(private, ec.EllipticCurvePrivateKey):
        curve, digest = {"secp256r1": ("nistp256", hashes.SHA256()), "secp384r1": ("nistp384", hashes.SHA384()),
                         "secp521r1": ("nistp521", hashes.SHA512())}[private.curve.name]
        r, s_ = utils.decode_dss_signature(private.sign(data, ec.ECDSA(digest)))
        return s("ecdsa-sha2-" + curve) + s(ecdsa_scalars(r, s_, loose))
    if isinstance(private, rsa.RSAPrivateKey):
        name, digest = {"rsa-sha2-512": ("rsa-sha2-512", hashes.SHA512()),
                        "rsa-sha2-256": ("rsa-sha2-256", hashes.SHA256())}.get(base, ("ssh-rsa", hashes.SHA1()))
        signature = private.sign(data, padding.PKCS1v15(), digest)
        return s(name) + s(signature.rjust((private.key_size + 7) // 8, b"\0"))
    if isinstance(private, dsa.DSAPrivateKey):
        r, s_ = utils.decode_dss_signature(private.sign(data, hashes.SHA1()))
        return s(b"ssh-dss") + s(r.to_bytes(20, "big") + s_.to_bytes(20, "big"))
    raise ValueError("unsupported key")

def signed_in_form(key, algorithm, data, blob):
    webauthn = {"webauthn": "same", "webauthn-other-challenge": "other"}.get(key["form"])
    signature = sign(key["private"], algorithm, data, blob, loose=key["form"] == "openssh-loose", webauthn=webauthn)
    return signature + b"\0" if key["form"] == "trailing-byte" else signature

KEX = [b"curve25519-sha256", b"curve25519-sha256@libssh.org"]
CIPHERS = b"aes128-ctr,aes256-ctr,chacha20-poly1305@openssh.com"
MACS = b"hmac-sha2-256,hmac-sha2-512"
V_S = b"SSH-2.0-FleetTrustFakeKeyServer_1.0"

def disconnect(conn, reason):
    try:
        conn.sendall(frame(bytes([1]) + struct.pack(">I", 3) + s(reason) + s(b"")))
    except OSError:
        pass

def handle(conn):
    conn.settimeout(10)
    f = conn.makefile("rb")
    conn.sendall(V_S + b"\r\n")
    v_c = b""
    for _ in range(50):
        line = f.readline(1024)
        if not line: return
        if line.startswith(b"SSH-"):
            v_c = line.rstrip(b"\r\n")
            break
    if not v_c: return
    lists = [b",".join(KEX), ",".join(offered).encode(), CIPHERS, CIPHERS, MACS, MACS, b"none", b"none", b"", b""]
    i_s = bytes([20]) + os.urandom(16) + b"".join(s(x) for x in lists) + b"\0" + struct.pack(">I", 0)
    late = config.get("kexinit_after_client", False)
    if not late: conn.sendall(frame(i_s))
    i_c = read_packet(f)
    while i_c[:1] != bytes([20]):
        if i_c[:1] == bytes([1]): return
        i_c = read_packet(f)
    if late: conn.sendall(frame(i_s))
    offset = 17
    client_lists = []
    for _ in range(10):
        names, offset = name_list(i_c, offset)
        client_lists.append(names)
    guess_follows = i_c[offset:offset + 1] == b"\x01"
    kex = next((k for k in client_lists[0] if k.encode() in KEX), None)
    host_key_algorithm = next((a for a in client_lists[1] if a in by_algorithm), None)
    if kex is None:
        disconnect(conn, b"no matching key exchange method")
        return
    if host_key_algorithm is None:
        disconnect(conn, b"no matching host key type")
        return
    if guess_follows and (client_lists[0][:1] != [kex] or client_lists[1][:1] != [host_key_algorithm]):
        read_packet(f)
    init = read_packet(f)
    while init[:1] != bytes([30]):
        if init[:1] == bytes([1]): return
        init = read_packet(f)
    q_c = init[5:5 + struct.unpack(">I", init[1:5])[0]]
    ephemeral = x25519.X25519PrivateKey.generate()
    q_s = ephemeral.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    k = ephemeral.exchange(x25519.X25519PublicKey.from_public_bytes(q_c))
    key = by_algorithm[host_key_algorithm]
    k_s = key["blob"]
    h = hashlib.sha256(s(v_c) + s(V_S) + s(i_c) + s(i_s) + s(k_s) + s(q_c) + s(q_s) + mpint_bytes(k)).digest()
    signature = signed_in_form(key, host_key_algorithm, h, k_s)
    conn.sendall(frame(bytes([31]) + s(k_s) + s(q_s) + s(signature)) + frame(bytes([21])))
    # Wait for the client's NEWKEYS (our own prober disconnects before it), then for its first
    # encrypted packet or a short while, and close without sending anything encrypted.
    conn.settimeout(5)
    while True:
        packet = read_packet(f)
        if packet[:1] == bytes([21]): break
        if packet[:1] == bytes([1]): return
    conn.settimeout(1)
    try:
        conn.recv(4096)
    except OSError:
        pass

def serve_connection(conn):
    try:
        handle(conn)
    except (EOFError, OSError):
        pass
    except Exception:
        import traceback
        sys.stderr.write(traceback.format_exc())
        sys.stderr.flush()
    finally:
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        conn.close()

def accept_loop(server):
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            continue
        threading.Thread(target=serve_connection, args=(conn,), daemon=True).start()

def listen_all(addresses):
    for _ in range(50):
        sockets = []
        port = 0
        try:
            for address in addresses:
                server = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
                sockets.append(server)
                server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                server.bind((address, port))
                server.listen(128)
                port = server.getsockname()[1]
            return sockets, port
        except OSError:
            for server in sockets: server.close()
    raise SystemExit("cannot listen")

sockets, port = listen_all(config["addresses"])
sys.stderr.write("%d\n" % port)
sys.stderr.flush()
for server in sockets[1:]:
    threading.Thread(target=accept_loop, args=(server,), daemon=True).start()
accept_loop(sockets[0])
"""#
}
