import ArgumentParser
import Foundation

/// The options that choose how a QR code is drawn (`inviso qr`, and `inviso invite` for its
/// link): `--no-unicode` and `--invert-qr`.
struct QRDisplayOptions: ParsableArguments {
    @Flag(
        name: .customLong("no-unicode"), help: "Draw with plain ASCII instead of Unicode blocks (also when TERM=dumb).")
    var noUnicode = false

    @Flag(name: .customLong("invert-qr"), help: "Swap the QR code's colours (for a light terminal background).")
    var invert = false

    /// The renderer these options and `environment` (its `TERM`) ask for.
    func renderer(environment: [String: String] = ProcessInfo.processInfo.environment) -> QRTerminalRenderer {
        QRTerminalRenderer(
            style: QRTerminalRenderer.style(noUnicode: noUnicode, environment: environment), invert: invert)
    }

    /// Whether output should avoid Unicode (for spinners and the status line too).
    func asciiOnly(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        QRTerminalRenderer.style(noUnicode: noUnicode, environment: environment) == .ascii
    }
}
