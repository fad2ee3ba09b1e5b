import Foundation

/// An ssh_config file with its `Include`s followed, flattened into conditional runs of settings.
///
/// OpenSSH reads the files in order and applies a setting when the `Host`/`Match` line above it
/// is active; an included file is read only while the block holding the `Include` is active. Here
/// that becomes a list of segments in file order, each with the conjunction of the conditions in
/// force, which `SSHConfigReader` evaluates for each alias.
struct SSHConfigLayout {
    enum Setting {
        case hostName(String)
        case port(Int)
        case user(String)
        case hostKeyAlias(String)
        case userKnownHostsFiles([String])
        /// `ProxyJump` or `ProxyCommand` (whichever comes first wins, as in `ssh`); nil for `none`.
        case proxy(String?)
        case hostKeyAlgorithms(String)
        case globalKnownHostsFiles([String])
        case checkHostIP(Bool)
        case hashKnownHosts(Bool)
        /// `RevokedHostKeys`: one file as written, or none (`none`).
        case revokedHostKeys([String])
    }

    struct Segment {
        var conditions: [SSHConfigCondition]
        var settings: [Setting] = []
    }

    static let maxIncludeDepth = 16
    static let maxIncludedFiles = 1_000

    private(set) var segments: [Segment] = []
    /// Concrete `Host` aliases in first-seen order, with the line that first named each.
    private(set) var aliases: [(name: String, location: SourceLocation)] = []
    private var aliasSeen = Set<String>()
    private var includedFiles = 0
    private let options: InventoryReadOptions

    init(contents: String, options: InventoryReadOptions, log: inout DiagnosticLog) {
        self.options = options
        read(contents, file: log.file, depth: 0, inherited: [], log: &log)
    }

    private mutating func read(_ contents: String, file: String, depth: Int, inherited: [SSHConfigCondition],
                               log: inout DiagnosticLog) {
        var conditions = inherited
        var current = Segment(conditions: conditions)
        for line in InventoryLines.split(contents) {
            let location = SourceLocation(file: file, line: line.number)
            guard line.text.utf8.count <= options.maxLineLength else {
                log.error(at: location, "line is longer than \(options.maxLineLength) bytes; skipped")
                continue
            }
            let directive: SSHConfigDirective
            do {
                guard let parsed = try SSHConfigDirective.parse(line.text, location: location) else { continue }
                directive = parsed
            } catch .noArgument(let keyword) {
                log.error(at: location, "no argument after keyword \(InventoryDiagnostic.quote(keyword))")
                continue
            } catch {
                log.error(at: location, "invalid quotes")
                continue
            }
            switch directive.keyword {
            case "host":
                flush(&current)
                conditions = inherited + [.host(directive.arguments)]
                current = Segment(conditions: conditions)
                for pattern in directive.arguments where SSHConfigPattern.isConcrete(pattern) && aliasSeen.insert(pattern).inserted {
                    aliases.append((pattern, location))
                }
            case "match":
                flush(&current)
                switch SSHConfigCondition.match(directive.arguments) {
                case .success(let condition):
                    conditions = inherited + [condition]
                case .failure(let error):
                    log.warning(at: location, error.text)
                    conditions = inherited + [.never]
                }
                current = Segment(conditions: conditions)
            case "include":
                flush(&current)
                guard options.followIncludes else {
                    log.warning(at: location, "Include not followed")
                    continue
                }
                for pattern in directive.arguments {
                    include(pattern, from: location, depth: depth, conditions: conditions, log: &log)
                }
                current = Segment(conditions: conditions)
            default:
                if let setting = setting(directive, log: &log) { current.settings.append(setting) }
            }
        }
        flush(&current)
    }

    private mutating func flush(_ segment: inout Segment) {
        if !segment.settings.isEmpty { segments.append(segment) }
        segment.settings = []
    }

    private func setting(_ directive: SSHConfigDirective, log: inout DiagnosticLog) -> Setting? {
        let arguments = directive.arguments
        let single: Bool
        let setting: Setting?
        switch directive.keyword {
        case "hostname":
            single = true
            setting = SSHConfigTokens.check(arguments[0], allowed: ["h", "%"], what: "HostName", at: directive.location, log: &log)
                ? .hostName(arguments[0]) : nil
        case "port":
            single = true
            switch HostPattern.port(arguments[0]) {
            case .success(let port): setting = .port(port)
            case .failure(let error):
                log.error(at: directive.location, "Port: \(error.text); ignored")
                setting = nil
            }
        case "user":
            single = true
            setting = .user(arguments[0])
        case "hostkeyalias":
            single = true
            setting = .hostKeyAlias(arguments[0])
        case "userknownhostsfile", "globalknownhostsfile":
            single = false
            let user = directive.keyword == "userknownhostsfile"
            for file in arguments {
                _ = SSHConfigTokens.check(file, allowed: SSHConfigTokens.knownHostsTokens,
                                          what: user ? "UserKnownHostsFile" : "GlobalKnownHostsFile", at: directive.location, log: &log)
            }
            setting = user ? .userKnownHostsFiles(arguments) : .globalKnownHostsFiles(arguments)
        case "hostkeyalgorithms":
            single = true
            setting = .hostKeyAlgorithms(arguments[0])
        case "checkhostip", "hashknownhosts":
            single = true
            guard let flag = SSHConfigLayout.flag(arguments[0]) else {
                log.error(at: directive.location, "\(directive.keyword): \(InventoryDiagnostic.quote(arguments[0])) is not yes or no; ignored")
                return nil
            }
            setting = directive.keyword == "checkhostip" ? .checkHostIP(flag) : .hashKnownHosts(flag)
        case "revokedhostkeys":
            single = true
            setting = .revokedHostKeys(arguments[0].lowercased() == "none" ? [] : [arguments[0]])
        case "proxyjump", "proxycommand":
            single = directive.keyword == "proxyjump"
            let keyword = directive.keyword == "proxyjump" ? "ProxyJump" : "ProxyCommand"
            let value = single ? arguments[0] : directive.rawArguments
            setting = .proxy(arguments.count == 1 && arguments[0].lowercased() == "none" ? nil : keyword + " " + value)
        default:
            return nil
        }
        if single && arguments.count > 1 {
            log.warning(at: directive.location, "\(directive.keyword) takes one argument; \(InventoryDiagnostic.quote(arguments[1])) and after ignored")
        }
        return setting
    }

    /// `yes`/`no` (and the `true`/`false` ssh also takes), as `ssh`'s flag options read them.
    static func flag(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true": return true
        case "no", "false": return false
        default: return nil
        }
    }

    private mutating func include(_ pattern: String, from location: SourceLocation, depth: Int,
                                  conditions: [SSHConfigCondition], log: inout DiagnosticLog) {
        guard depth < Self.maxIncludeDepth else {
            log.error(at: location, "Include nested more than \(Self.maxIncludeDepth) levels deep; not followed")
            return
        }
        let path: String
        if pattern == "~" || pattern.hasPrefix("~/") {
            path = options.homeDirectory + pattern.dropFirst()
        } else if pattern.hasPrefix("~") {
            log.error(at: location, "Include \(InventoryDiagnostic.quote(pattern)): ~user paths are not supported; not followed")
            return
        } else if pattern.hasPrefix("/") {
            path = pattern
        } else {
            path = options.includeDirectory + "/" + pattern
        }
        let files = Self.glob(path)
        if files.isEmpty {
            log.warning(at: location, "Include \(InventoryDiagnostic.quote(pattern)) matches no file")
        }
        for file in files {
            includedFiles += 1
            guard includedFiles <= Self.maxIncludedFiles else {
                log.error(at: location, "more than \(Self.maxIncludedFiles) included files; \(InventoryDiagnostic.quote(file)) not read")
                return
            }
            guard let data = FileManager.default.contents(atPath: file) else {
                log.warning(at: location, "Include \(InventoryDiagnostic.quote(file)) could not be read")
                continue
            }
            read(String(decoding: data, as: UTF8.self), file: file, depth: depth + 1, inherited: conditions, log: &log)
        }
    }

    /// `glob(3)`, sorted, as OpenSSH expands `Include` patterns.
    private static func glob(_ pattern: String) -> [String] {
        var result = glob_t()
        defer { globfree(&result) }
        guard Foundation.glob(pattern, 0, nil, &result) == 0 else { return [] }
        return (0..<Int(result.gl_pathc)).compactMap { index in
            result.gl_pathv[index].map { String(cString: $0) }
        }
    }
}
