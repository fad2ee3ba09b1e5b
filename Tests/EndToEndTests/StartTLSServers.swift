import FleetTrustTestFleet
import Foundation
import Glibc

/// Real STARTTLS servers from Debian packages, each with a private configuration in the lab's
/// directory and on its own loopback port, each stopped by its PID: Postfix (`master -d`),
/// Dovecot (`dovecot -F`, IMAP and POP3), slapd (`slapd -d 0`) and PostgreSQL (`initdb`, then
/// `postgres` as `nobody`). Certificates come from the `TLSTestLab` beside them.
final class StartTLSServers: @unchecked Sendable {
    let lab: TLSTestLab
    private var processes: [SpawnedProcess] = []

    init(lab: TLSTestLab) {
        self.lab = lab
    }

    /// Stops every server by its PID.
    func stop() {
        processes.forEach { $0.terminate() }
        processes = []
    }

    /// Postfix's smtpd on three ports: STARTTLS offered, STARTTLS not offered (security level
    /// none), and required (`encrypt`, as a submission service has it).
    func postfix(certificate: String, key: String) throws -> (offered: Int, stripped: Int, required: Int) {
        let directory = lab.path("postfix")
        let ports = (offered: try Loopback.freePort(), stripped: try Loopback.freePort(), required: try Loopback.freePort())
        try FileManager.default.createDirectory(atPath: directory + "/queue", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        guard let owner = getpwnam("postfix") else { throw TestFleetError.toolFailed("no postfix user (apt-get install postfix)") }
        chown(directory + "/data", owner.pointee.pw_uid, owner.pointee.pw_gid)
        try """
            compatibility_level = 3.6
            queue_directory = \(directory)/queue
            data_directory = \(directory)/data
            mail_owner = postfix
            setgid_group = postdrop
            inet_interfaces = all
            inet_protocols = ipv4
            myhostname = relay.test
            mydestination =
            alias_maps =
            alias_database =
            maillog_file = /dev/stdout
            smtpd_tls_cert_file = \(lab.path(certificate + ".pem"))
            smtpd_tls_key_file = \(lab.path(key + ".key"))
            smtpd_tls_security_level = may
            smtpd_tls_session_cache_database =

            """.write(toFile: directory + "/main.cf", atomically: true, encoding: .utf8)
        try """
            127.0.0.1:\(ports.offered) inet n - n - - smtpd
            127.0.0.1:\(ports.stripped) inet n - n - - smtpd -o smtpd_tls_security_level=none
            127.0.0.1:\(ports.required) inet n - n - - smtpd -o smtpd_tls_security_level=encrypt
            postlog unix-dgram n - n - 1 postlogd
            proxymap unix - - n - - proxymap
            anvil unix - - n - 1 anvil
            tlsmgr unix - - n 1000? 1 tlsmgr

            """.write(toFile: directory + "/master.cf", atomically: true, encoding: .utf8)
        // `postfix check` makes the queue's directories; `master -d` then stays in the foreground.
        let check = try ProgramRun.run("/usr/sbin/postfix", ["-c", directory, "check"], limit: 60)
        guard check.status == 0 else { throw TestFleetError.toolFailed("postfix check: \(check.stderrText)") }
        try start("/usr/lib/postfix/sbin/master", ["-d", "-c", directory], log: "postfix.log",
                  ports: [ports.offered, ports.stripped, ports.required])
        return ports
    }

    /// Dovecot with IMAP and POP3 (STARTTLS on both), no implicit-TLS listeners.
    func dovecot(certificate: String, key: String) throws -> (imap: Int, pop3: Int) {
        let directory = lab.path("dovecot")
        let ports = (imap: try Loopback.freePort(), pop3: try Loopback.freePort())
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
        try """
            base_dir = \(directory)/run
            state_dir = \(directory)/state
            log_path = \(directory)/dovecot.log
            protocols = imap pop3
            listen = 127.0.0.1
            ssl = yes
            ssl_cert = <\(lab.path(certificate + ".pem"))
            ssl_key = <\(lab.path(key + ".key"))
            passdb {
              driver = static
              args = nopassword=y
            }
            userdb {
              driver = static
              args = uid=nobody gid=nogroup home=\(directory)/home
            }
            service imap-login {
              inet_listener imap {
                port = \(ports.imap)
              }
              inet_listener imaps {
                port = 0
              }
            }
            service pop3-login {
              inet_listener pop3 {
                port = \(ports.pop3)
              }
              inet_listener pop3s {
                port = 0
              }
            }

            """.write(toFile: directory + ".conf", atomically: true, encoding: .utf8)
        try start("/usr/sbin/dovecot", ["-F", "-c", directory + ".conf"], log: "dovecot.out", ports: [ports.imap, ports.pop3])
        return ports
    }

    /// slapd with no database, answering StartTLS with `certificate`; without one it refuses
    /// StartTLS (result 2, protocolError).
    func slapd(certificate: String?, key: String?) throws -> Int {
        let port = try Loopback.freePort()
        var configuration = "pidfile \(lab.path("slapd-\(port).pid"))\n"
        if let certificate, let key {
            configuration += "TLSCertificateFile \(lab.path(certificate + ".pem"))\nTLSCertificateKeyFile \(lab.path(key + ".key"))\n"
        }
        try lab.write("slapd-\(port).conf", configuration)
        try start("/usr/sbin/slapd", ["-d", "0", "-h", "ldap://127.0.0.1:\(port)/", "-f", lab.path("slapd-\(port).conf")],
                  log: "slapd-\(port).log", ports: [port])
        return port
    }

    /// PostgreSQL 15 with `ssl=on`, a cluster made by `initdb` (no fsync), run as `nobody`.
    func postgres(certificate: String, key: String) throws -> Int {
        let directory = lab.path("postgres")
        let port = try Loopback.freePort()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let nobody = getpwnam("nobody") else { throw TestFleetError.toolFailed("no user nobody") }
        let (uid, gid) = (nobody.pointee.pw_uid, nobody.pointee.pw_gid)
        // The server refuses a key readable by others or owned by another user.
        for (source, target) in [(certificate + ".pem", "server.pem"), (key + ".key", "server.key")] {
            try FileManager.default.copyItem(atPath: lab.path(source), toPath: directory + "/" + target)
            chown(directory + "/" + target, uid, gid)
            chmod(directory + "/" + target, 0o600)
        }
        chown(directory, uid, gid)
        chmod(lab.directory, 0o755)
        let binaries = "/usr/lib/postgresql/15/bin"
        let asNobody = ["--reuid=nobody", "--regid=\(gid)", "--clear-groups"]
        let initdb = try ProgramRun.run("/usr/bin/setpriv", asNobody + ["\(binaries)/initdb", "-N", "-A", "trust", "-U", "postgres",
                                                                        "-D", directory + "/data"], limit: 120)
        guard initdb.status == 0 else { throw TestFleetError.toolFailed("initdb: \(initdb.stderrText)") }
        try start("/usr/bin/setpriv", asNobody + ["\(binaries)/postgres", "-D", directory + "/data", "-k", directory,
                                                  "-c", "listen_addresses=127.0.0.1", "-c", "port=\(port)", "-c", "fsync=off",
                                                  "-c", "ssl=on", "-c", "ssl_cert_file=\(directory)/server.pem",
                                                  "-c", "ssl_key_file=\(directory)/server.key"],
                  log: "postgres.log", ports: [port])
        return port
    }

    /// `openssl s_client -starttls PROTOCOL -verify_return_error` with the lab's root as the only
    /// CA and `localhost` as the name to check: whether it completes a verified handshake.
    func sClientVerifies(_ protocolName: String, port: Int) throws -> Bool {
        let run = try ProgramRun.run("/usr/bin/openssl", ["s_client", "-starttls", protocolName, "-connect", "127.0.0.1:\(port)",
                                                          "-servername", "localhost", "-verify_hostname", "localhost",
                                                          "-verify_return_error", "-CAfile", lab.path("root.pem")], limit: 30)
        return run.status == 0 && run.stdoutText.contains("Verify return code: 0 (ok)")
    }

    private func start(_ path: String, _ arguments: [String], log: String, ports: [Int]) throws {
        let process = try SpawnedProcess(path, arguments, stderrPath: lab.path(log))
        processes.append(process)
        let deadline = Date().addingTimeInterval(60)
        for port in ports {
            while !Loopback.accepts(address: "127.0.0.1", port: port) {
                guard process.isRunning, Date() < deadline else {
                    let text = (try? String(contentsOfFile: lab.path(log), encoding: .utf8)) ?? ""
                    throw TestFleetError.toolFailed("\(path) did not listen on \(port): \(text.suffix(2000))")
                }
                usleep(50_000)
            }
        }
    }
}
