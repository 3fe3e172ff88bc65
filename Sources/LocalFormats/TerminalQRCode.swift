import CQRencode

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A QR code drawn with Unicode half blocks: two module rows per text line, so a code for an
/// otpauth:// URI fits an 80-column terminal.
public struct TerminalQRCode: Sendable {
    /// `modules[y][x]` is true for a dark module.
    public let modules: [[Bool]]

    /// libqrencode is missing (`libraryUnavailable`: it is loaded when the first code is drawn,
    /// CQRencode.h) or could not encode the text (too long for a QR code, out of memory).
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public var libraryUnavailable = false
    }

    public init(encoding text: String) throws {
        guard authctl_qr_load() == 1 else {
            let reason = String(cString: authctl_qr_load_error())
            throw Failure(description: "cannot draw the QR code: \(reason)", libraryUnavailable: true)
        }
        guard let code = authctl_qr_encode_string(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
            throw Failure(description: "cannot draw the QR code: \(String(cString: strerror(errno)))")
        }
        defer { authctl_qr_free(code) }
        let width = Int(code.pointee.width)
        var rows: [[Bool]] = []
        for y in 0..<width {
            rows.append((0..<width).map { x in (code.pointee.data[y * width + x] & 1) == 1 })
        }
        modules = rows
    }

    /// The quiet zone the QR specification asks for around the code, in modules.
    public static let quietZone = 4

    /// With `colors`, dark modules are drawn black on a white background (quiet zone included)
    /// whatever the terminal's theme. Without (NO_COLOR, not a terminal) a terminal offers only its
    /// own two tones, foreground and background, and which is the dark one depends on the theme:
    /// light modules (quiet zone included) are drawn as blocks in the foreground colour, for the
    /// usual light-on-dark terminal; on a light theme the code shows inverted (the caller says so).
    public func render(colors: Bool, quietZone: Int = TerminalQRCode.quietZone) -> String {
        let size = modules.count + 2 * quietZone
        func dark(_ x: Int, _ y: Int) -> Bool {
            let mx = x - quietZone
            let my = y - quietZone
            guard mx >= 0, my >= 0, mx < modules.count, my < modules.count else { return false }
            return modules[my][mx]
        }
        var lines: [String] = []
        var y = 0
        while y < size {
            var line = ""
            for x in 0..<size {
                let top = dark(x, y)
                let bottom = y + 1 < size ? dark(x, y + 1) : false
                if colors {
                    // Foreground black, background white: "█" both dark, " " both light.
                    switch (top, bottom) {
                    case (true, true): line += "█"
                    case (true, false): line += "▀"
                    case (false, true): line += "▄"
                    case (false, false): line += " "
                    }
                } else {
                    // Blocks mark light modules.
                    switch (top, bottom) {
                    case (false, false): line += "█"
                    case (false, true): line += "▀"
                    case (true, false): line += "▄"
                    case (true, true): line += " "
                    }
                }
            }
            lines.append(colors ? "\u{1B}[30;107m" + line + "\u{1B}[0m" : line)
            y += 2
        }
        return lines.joined(separator: "\n")
    }
}
