import Foundation

/// An ssh_config file with its `Include`s followed, flattened into conditional runs of settings.
///
/// OpenSSH reads the files in order and applies a setting when the `Host`/`Match` line above it
/// is active; an included file is read only while the block holding the `Include` is active. Here
/// that becomes a list of segments in file order, each with the conjunction of the conditions in
/// force, which `SSHConfigReader` evaluates for each alias.
struct SSHConfigLayout {
    struct Segment {
        var conditions: [SSHConfigCondition]
        var settings: [(option: SSHOption, location: SourceLocation)] = []

        /// A `Match final` (not negated) asks `ssh` for the second reading wherever it is reached,
        /// whether or not its block sets anything (`match_cfg_line`'s `want_final_pass`).
        var asksForFinalPass: Bool {
            conditions.contains { condition in
                guard case .match(let criteria) = condition else { return false }
                return criteria.contains { if case .final = $0.kind { !$0.negated } else { false } }
            }
        }
    }

    static let maxIncludeDepth = 16
    static let maxIncludedFiles = 1_000
    /// `ssh` reads a line of any length (a generated `Host` line may name thousands of hosts);
    /// ours is bounded, and a longer line refuses the configuration (`refuse`).
    static let maxLineLength = 1 << 20

    private(set) var segments: [Segment] = []
    /// Concrete `Host` aliases in first-seen order, with the line that first named each.
    private(set) var aliases: [(name: String, location: SourceLocation)] = []
    /// The file read first (the one given).
    let file: String
    /// Each included file, with the files whose `Include` lines read it.
    private(set) var includers: [String: Set<String>] = [:]
    private var aliasSeen = Set<String>()
    private var includedFiles = 0
    private let options: InventoryReadOptions

    init(contents: String, options: InventoryReadOptions, log: inout DiagnosticLog) {
        self.options = options
        file = log.file
        read(contents, file: log.file, depth: 0, inherited: [], log: &log)
    }

    private mutating func read(_ contents: String, file: String, depth: Int, inherited: [SSHConfigCondition],
                               log: inout DiagnosticLog) {
        var conditions = inherited
        var current = Segment(conditions: conditions)
        let maxLength = max(options.maxLineLength, Self.maxLineLength)
        for line in InventoryLines.split(contents) {
            let location = SourceLocation(file: file, line: line.number)
            guard line.text.utf8.count <= maxLength else {
                log.error(at: location, "line is longer than \(maxLength) bytes; every host this file applies to is unchecked")
                refuse(line.text, at: location, conditions: inherited, why: "a line longer than \(maxLength) bytes, which fleettrust does not read")
                continue
            }
            let directive: SSHConfigDirective
            do {
                guard let parsed = try SSHConfigDirective.parse(line.text, location: location) else { continue }
                directive = parsed
            } catch .noArgument(let keyword) {
                log.error(at: location, "no argument after keyword \(InventoryDiagnostic.quote(keyword)); ssh refuses the configuration")
                refuse(line.text, at: location, conditions: inherited, why: "ssh refuses the configuration: no argument after the keyword")
                continue
            } catch {
                log.error(at: location, "invalid quotes; ssh refuses the configuration")
                refuse(line.text, at: location, conditions: inherited, why: "ssh refuses the configuration: invalid quotes")
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
                switch SSHConfigCondition.match(directive.arguments, at: location) {
                case .success(let condition):
                    if case .match(let criteria) = condition {
                        for criterion in criteria {
                            if case .unsupported(let text, _) = criterion.kind {
                                let word = text.prefix { $0 != " " }
                                log.warning(at: location, "Match criterion \(InventoryDiagnostic.quote(String(word))) is not supported; fleettrust cannot tell whether this Match block applies")
                            }
                        }
                    }
                    conditions = inherited + [condition]
                case .failure(let error):
                    log.warning(at: location, error.text)
                    conditions = inherited + [.unsupported(UnjudgedSetting(keyword: "Match \(directive.rawArguments)", location: location,
                                                                            why: error.text))]
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
                if let setting = setting(directive, log: &log) { current.settings.append((setting, location)) }
            }
        }
        flush(&current)
    }

    /// A line `ssh` refuses the whole configuration for (or one too long to read): no host this
    /// file is read for can be judged as `ssh` would (it does not start, or reads what we did
    /// not), so each is unchecked, naming the line. Inside an `Include`, only the hosts the
    /// including block applies to (`ssh` reads the file only for them).
    private mutating func refuse(_ text: Substring, at location: SourceLocation, conditions: [SSHConfigCondition], why: String) {
        let word = text.drop { $0 == " " || $0 == "\t" }.prefix { $0 != " " && $0 != "\t" && $0 != "=" }.prefix(40)
        let keyword = word.isEmpty ? "ssh_config" : SSHOption.spelling(String(word).lowercased())
        segments.append(Segment(conditions: conditions, settings: [(.unjudged(keyword: keyword, why: why), location)]))
    }

    private mutating func flush(_ segment: inout Segment) {
        if !segment.settings.isEmpty || segment.asksForFinalPass { segments.append(segment) }
        segment.settings = []
    }

    /// One line through the keyword table: a bad value is reported at its line and, since `ssh`
    /// refuses the whole configuration for it, makes the hosts it would apply to unjudged.
    private func setting(_ directive: SSHConfigDirective, log: inout DiagnosticLog) -> SSHOption? {
        let arguments = directive.arguments
        if SSHOption.takesOneArgument(directive.keyword) && arguments.count > 1 {
            let keyword = SSHOption.spelling(directive.keyword)
            log.error(at: directive.location, "\(keyword) takes one argument; ssh refuses the configuration for \(InventoryDiagnostic.quote(arguments[1])) and after")
            return .unjudged(keyword: keyword, why: "ssh refuses the configuration: extra arguments at end of line")
        }
        switch SSHOption.parse(keyword: directive.keyword, arguments: arguments, rawArguments: directive.rawArguments) {
        case .success(.option(let option)):
            return option
        case .success(.noEffect):
            return nil
        case .success(.unknown):
            log.warning(at: directive.location, "\(InventoryDiagnostic.quote(directive.keyword)) is not an OpenSSH 9.2 keyword (ssh refuses the file unless IgnoreUnknown names it); ignored")
            return nil
        case .failure(let problem):
            log.error(at: directive.location, "\(problem.text); ignored")
            return .unjudged(keyword: SSHOption.spelling(directive.keyword),
                             why: "ssh refuses the configuration: \(problem.text)")
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
            includers[file, default: []].insert(location.file)
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
