@testable import FleetTrustDashboard
import Foundation
import XCTest

/// Every shipped theme is readable: each role's text on its background reaches WCAG's 4.5:1 for
/// normal text, computed on xterm's default palette.
final class ThemeContrastTests: XCTestCase {
    typealias RGB = (red: Double, green: Double, blue: Double)

    /// xterm's default colours 0-15 (its XTerm-col.ad); 16-255 follow from the colour cube and the grey ramp.
    static let xtermBase: [RGB] = [
        (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
        (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255),
    ]

    static func xterm(_ n: Int) -> RGB {
        if n < 16 { return xtermBase[n] }
        if n >= 232 {
            let level = Double(8 + 10 * (n - 232))
            return (level, level, level)
        }
        let steps: [Double] = [0, 95, 135, 175, 215, 255]
        let c = n - 16
        return (steps[c / 36], steps[(c / 6) % 6], steps[c % 6])
    }

    /// WCAG 2 relative luminance of an sRGB colour.
    static func luminance(_ color: RGB) -> Double {
        func linear(_ channel: Double) -> Double {
            let c = channel / 255
            return c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(color.red) + 0.7152 * linear(color.green) + 0.0722 * linear(color.blue)
    }

    static func contrast(_ a: RGB, _ b: RGB) -> Double {
        let (x, y) = (luminance(a), luminance(b))
        return (max(x, y) + 0.05) / (min(x, y) + 0.05)
    }

    /// The terminal's own colours a theme is meant for (`default` in a theme file): xterm's
    /// default light grey on black for dark terminals, its black on white for light ones.
    static let dark: (text: RGB, background: RGB) = (xtermBase[7], xtermBase[0])
    static let light: (text: RGB, background: RGB) = (xtermBase[0], xtermBase[15])
    static let terminals: [String: [(text: RGB, background: RGB)]] = [
        "default": [dark], "high-contrast": [dark], "light": [light], "monochrome": [dark, light],
    ]

    /// Attributes are not counted: reverse swaps the pair (same ratio) and terminals render bold
    /// and dim in different ways; 8-colour fallbacks are the palette's business (ThemeTests).
    func testEveryThemesTextAndBackgroundReachAContrastOfAtLeast4Point5OnTheXtermPalette() throws {
        XCTAssertEqual(Self.contrast((0, 0, 0), (255, 255, 255)), 21, accuracy: 0.001)
        for (name, terminals) in Self.terminals {
            let theme = try Theme.load(name, searching: [ThemeTests.themesDirectory])
            for terminal in terminals {
                for role in StyleRole.allCases {
                    let style = theme.style(role)
                    func rgb(_ color: TerminalColor, default fallback: RGB) -> RGB {
                        if case .indexed(let n) = color { return Self.xterm(n) }
                        return fallback
                    }
                    let ratio = Self.contrast(rgb(style.foreground, default: terminal.text),
                                              rgb(style.background, default: terminal.background))
                    XCTAssertGreaterThanOrEqual(ratio, 4.5, "\(name).theme: \(role.rawValue) has a contrast of \((ratio * 100).rounded() / 100):1")
                }
            }
        }
    }

    func testTheShippedThemesAreTheOnesChecked() throws {
        let shipped = try FileManager.default.contentsOfDirectory(atPath: ThemeTests.themesDirectory)
            .filter { $0.hasSuffix(".theme") }.map { String($0.dropLast(6)) }
        XCTAssertEqual(Set(shipped), Set(Self.terminals.keys))
    }
}
