/// Reads the simplest inventory: one `[user@]host[:port]` per line, `#` comments, blank lines;
/// a line `https://host[:port]`, `tls://host:port` or a STARTTLS service (`smtp://host`, `postgres://host:5433`)
/// is a TLS endpoint (`TLSInventoryEndpoints`).
///
/// Hosts are written as `host`, `host:port`, `[host]:port`, `[v6addr]:port` or a bare IPv6
/// literal. The name is the line's host text (with its port; an IPv6 literal compressed), so the
/// same address on two ports stays two hosts.
enum PlainListReader {
    static func read(_ contents: String, options: InventoryReadOptions, log: inout DiagnosticLog) -> [InventoryHost] {
        var hosts: [InventoryHost] = []
        for line in InventoryLines.split(contents, maxLength: options.maxLineLength, log: &log) {
            var text = line.text
            if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
            let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\u{0C}" })
            guard let word = words.first else { continue }
            if words.count > 1 {
                log.error(line.number, "expected one host per line, found \(InventoryDiagnostic.quote(words[1])) after \(InventoryDiagnostic.quote(word))", skipping: 1)
                continue
            }
            if let tls = TLSInventoryEndpoints.plain(word) {
                switch tls {
                case .failure(let error): log.error(line.number, error.text, skipping: 1)
                case .success(var host):
                    host.source = log.location(line.number)
                    host.format = .plain
                    hosts.append(host)
                }
                continue
            }
            var user: String?
            var spec = word
            if let at = word.lastIndex(of: "@") {
                user = String(word[..<at])
                spec = word[word.index(after: at)...]
                if user!.isEmpty || user!.contains("@") {
                    log.error(line.number, "\(InventoryDiagnostic.quote(word)) is not [user@]host[:port]: \(user!.isEmpty ? "empty user name" : "more than one '@'")", skipping: 1)
                    continue
                }
            }
            switch HostPattern.endpoint(spec) {
            case .failure(let error):
                log.error(line.number, error.text, skipping: 1)
            case .success(let endpoint) where !Self.isHostName(endpoint.host):
                log.error(line.number, "\(InventoryDiagnostic.quote(word)) is not [user@]host[:port]: \(InventoryDiagnostic.quote(endpoint.host)) "
                          + "is neither a host name (letters, digits, '.', '-', '_') nor an IP address; one host per line", skipping: 1)
            case .success(let endpoint):
                let port = endpoint.port ?? 22
                let address = Self.rowAddress(endpoint.host)
                let name = endpoint.port == nil ? address
                    : address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
                var host = InventoryHost(name: name, address: address, port: port, user: user,
                                         source: log.location(line.number), format: .plain)
                if let configuration = options.sshConfiguration {
                    host = configuration.host(host, port: endpoint.port, options: options)
                }
                if host.hasUnsafeText {
                    log.warning(line.number, "host \(InventoryDiagnostic.quote(name)) contains control characters or invalid UTF-8; it is shown sanitized")
                }
                hosts.append(host)
            }
        }
        return hosts
    }

    /// What a plain list takes as a host: a DNS-style name or an IP address literal. A comma list
    /// (`web1,10.0.0.1`, pasted from known_hosts), a lone bracket or other ASCII punctuation is a
    /// typo to report, not a host to probe. Text beyond ASCII is kept as data and shown cleaned
    /// (the readers flag it), as in every other format.
    /// An IPv6 literal in its compressed form (`0:0:0:0:0:0:0:1` and `::0001` are `::1`), so that
    /// one address is one row; any other host as written.
    static func rowAddress(_ host: String) -> String {
        host.contains(":") ? LookupName.canonicalAddress(host) ?? host : host
    }

    static func isHostName(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        if host.contains(":") {
            return host.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || $0 == ":" || $0 == "." }
        }
        func allowed(_ scalar: Unicode.Scalar) -> Bool {
            !scalar.isASCII || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
        }
        guard let first = host.unicodeScalars.first, allowed(first) else { return false }
        return host.unicodeScalars.allSatisfy { allowed($0) || $0 == "." || $0 == "-" || $0 == "_" }
    }
}
