/// Reads the simplest inventory: one `[user@]host[:port]` per line, `#` comments, blank lines;
/// a line `https://host[:port]` or `tls://host:port` is a TLS endpoint (`TLSInventoryEndpoints`).
///
/// Hosts are written as `host`, `host:port`, `[host]:port`, `[v6addr]:port` or a bare IPv6
/// literal. The name is the line's host text (with its port), so the same address on two ports
/// stays two hosts.
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
                if user!.isEmpty {
                    log.error(line.number, "empty user name before '@' in \(InventoryDiagnostic.quote(word))", skipping: 1)
                    continue
                }
            }
            switch HostPattern.endpoint(spec) {
            case .failure(let error):
                log.error(line.number, error.text, skipping: 1)
            case .success(let endpoint):
                let port = endpoint.port ?? 22
                let name = endpoint.port == nil ? endpoint.host
                    : endpoint.host.contains(":") ? "[\(endpoint.host)]:\(port)" : "\(endpoint.host):\(port)"
                var host = InventoryHost(name: name, address: endpoint.host, port: port, user: user,
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
}
