import CYaml

/// How deep a YAML (or JSON) document nests, measured before Yams composes it.
///
/// Yams composes a document recursively, one call per level of nesting, so a value nested
/// thousands deep (`[[[[…`, from a file or a dynamic inventory script) overflows the stack and
/// kills the process. The bound is taken from libyaml's own event parser, the one Yams reads
/// (iterative, its stacks on the heap): the depth counted is exactly the depth Yams would
/// compose, whatever quoting, comments or block scalars the text holds. A syntax error ends the
/// count; Yams then stops at the same error, no deeper than what was counted.
enum YAMLNesting {
    static let limit = 500

    /// The line (from 1) of the first collection nested more than `limit` deep, or nil.
    static func firstTooDeep(_ contents: String, limit: Int = limit) -> Int? {
        var text = contents
        return text.withUTF8 { bytes in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else { return nil }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, bytes.baseAddress, bytes.count)
            var depth = 0
            var event = yaml_event_t()
            while yaml_parser_parse(&parser, &event) == 1 {
                defer { yaml_event_delete(&event) }
                switch event.type {
                case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                    depth += 1
                    if depth > limit { return Int(event.start_mark.line) + 1 }
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    depth -= 1
                case YAML_STREAM_END_EVENT:
                    return nil
                default:
                    break
                }
            }
            return nil
        }
    }
}
