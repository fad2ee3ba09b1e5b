import Foundation
import XCTest
import FleetTrustCore
import FleetTrustTestFleet

/// The resolver as an attacker: a fake DNS server (a short Python script, since no real resolver
/// lies on purpose) that sets the AD bit on every answer and, per mode, truncates, floods, puts a
/// compression loop in the answer, answers for another name or with another type. The real `ssh`
/// given the same resolv.conf is the oracle; fleettrust is never quieter. About 10 s: in `make
/// test-integration`.
final class LyingResolverTests: XCTestCase {
    private static let script = #"""
        import os, socket, struct, sys, threading
        addr, mode, records, a_addr = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
        rdatas = [bytes.fromhex(x) for x in records.split(",")]
        def question(q):
            i = 12
            while q[i]: i += 1 + q[i]
            return q[12:i + 5], struct.unpack(">H", q[i + 1:i + 3])[0]
        def rr(name, kind, data): return name + struct.pack(">HHIH", kind, 1, 60, len(data)) + data
        def answer(q, tcp):
            asked, kind = question(q)
            flags, ans = 0x81a0, []
            if kind == 1: ans = [rr(b"\xc0\x0c", 1, socket.inet_aton(a_addr))]
            elif kind == 44:
                if mode == "truncated": flags |= 0x0200
                elif mode == "flood": ans = [rr(b"\xc0\x0c", 44, bytes([4, 2]) + os.urandom(32)) for _ in range(1100)] + [rr(b"\xc0\x0c", 44, d) for d in rdatas]
                elif mode == "loop":
                    at = 12 + len(asked)
                    ans = [rr(struct.pack(">H", 0xc000 | at), 44, rdatas[0])] + [rr(b"\xc0\x0c", 44, d) for d in rdatas]
                elif mode == "other-name": ans = [rr(b"\x05other\x07example\x00", 44, d) for d in rdatas]
                elif mode == "other-type": ans = [rr(b"\xc0\x0c", 99, d) for d in rdatas]
                else: ans = [rr(b"\xc0\x0c", 44, d) for d in rdatas]
            message = q[:2] + struct.pack(">HHHHH", flags, 1, len(ans), 0, 0) + asked + b"".join(ans)
            if not tcp and len(message) > 512: message = q[:2] + struct.pack(">HHHHH", flags | 0x0200, 1, 0, 0, 0) + asked
            return message
        def serve_tcp():
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((addr, 53)); s.listen(8)
            while True:
                c, _ = s.accept()
                try:
                    n = struct.unpack(">H", c.recv(2))[0]; q = c.recv(n)
                    if mode != "truncated":
                        m = answer(q, True); c.sendall(struct.pack(">H", len(m)) + m)
                finally: c.close()
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((addr, 53))
        threading.Thread(target=serve_tcp, daemon=True).start()
        while True:
            q, peer = u.recvfrom(4096)
            u.sendto(answer(q, False), peer)
        """#

    func testALyingResolverNeverMakesFleettrustQuieterThanSsh() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("python3 is missing") }
        let lab = try SSHConfigOracleLab()
        defer { lab.stop() }
        let ed = try XCTUnwrap(lab.sshd.key(ofType: "ssh-ed25519"))
        let records = SSHFPRecord.records(for: ed).map { String(format: "%02x%02x", $0.algorithm, $0.digestType) + $0.hexDigest }
        let script = try lab.write("liar.py", Self.script)
        let address = DNSSECResolverLab.resolverAddress()
        let config = try lab.write("config", """
            Host liar
              HostName h1.lie.example
              Port \(lab.sshd.port)
              VerifyHostKeyDNS yes
              HostKeyAlgorithms ssh-ed25519
              UserKnownHostsFile \(try lab.write("known_hosts", ""))
              GlobalKnownHostsFile /dev/null

            """)
        let hosts = try lab.write("hosts", "127.0.0.1 localhost\n")
        let trustAD = try lab.write("resolv-trust-ad", "nameserver \(address)\noptions timeout:2 attempts:1 trust-ad\n")
        let plain = try lab.write("resolv-plain", "nameserver \(address)\noptions timeout:2 attempts:1\n")
        let rows: [(mode: String, resolv: String, ssh: SSHOracle.Finding, status: HostStatus)] = [
            // glibc clears a lying AD bit unless resolv.conf trusts the resolver, as ssh relies on.
            ("match", plain, .unknown, .new),
            ("match", trustAD, .accepted, .trusted),
            ("truncated", trustAD, .unknown, .new),
            ("flood", trustAD, .unknown, .new),
            ("loop", trustAD, .unknown, .new),
            ("other-name", trustAD, .accepted, .trusted),
            ("other-type", trustAD, .unknown, .new),
        ]
        for row in rows {
            let liar = try SpawnedProcess("/usr/bin/python3", [script, address, row.mode, records.joined(separator: ","), "127.0.0.1"],
                                          stderrPath: lab.path("liar.log"))
            defer { liar.terminate() }
            let deadline = Date().addingTimeInterval(10)
            while !Loopback.accepts(address: address, port: 53) {
                guard liar.isRunning, Date() < deadline else { return XCTFail("the fake resolver did not start (\(lab.path("liar.log")))") }
                usleep(10_000)
            }
            try lab.check([SSHConfigCase(alias: "liar", ssh: row.ssh, status: row.status)], config: config, hosts: hosts, resolv: row.resolv)
        }
    }
}
