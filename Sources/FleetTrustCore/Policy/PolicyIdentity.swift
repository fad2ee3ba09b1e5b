/// Which policy judged a host: a built-in one by its typed name, or a library user's custom one
/// by the name it was given. Renderers ask it (`checksNothing`, `builtIn`) instead of comparing
/// names; the name is made only at the edge (`description`).
public enum PolicyIdentity: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    case builtIn(PolicyName)
    /// A custom policy; a custom policy never takes a built-in's name (the built-in wins).
    case custom(String)

    /// A built-in's identity from its name, else a custom one.
    public init(named name: String) {
        self = PolicyName(rawValue: name).map(PolicyIdentity.builtIn) ?? .custom(name)
    }

    public init(stringLiteral name: String) { self.init(named: name) }

    public var description: String {
        switch self {
        case .builtIn(let name): return name.rawValue
        case .custom(let name): return name
        }
    }

    /// The built-in policy, when it is one.
    public var builtIn: PolicyName? {
        if case .builtIn(let name) = self { return name }
        return nil
    }

    /// The `off` policy: nothing is checked (unsafe by design, never trusted).
    public var checksNothing: Bool { self == .builtIn(.off) }
}
