import ArgumentParser
import Foundation

/// `inviso qr TEXT`: prints a QR code of `TEXT` the way `inviso invite` shows its link.
struct QRCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qr",
        abstract: "Print a QR code of some text on the terminal.",
        discussion: """
            Byte mode, the smallest version that fits, and the best of the 8 masks unless \
            --version or --mask fix them. --json prints the module matrix instead (rows of \
            1 = dark, 0 = light, no quiet zone).
            """
    )

    @Argument(help: "The text to encode (as UTF-8).")
    var text: String

    @Option(help: "Error-correction level: L, M, Q or H.")
    var level: String = "M"

    @Option(help: "Use exactly this version (1…40).")
    var version: Int?

    @Option(help: "Use exactly this mask (0…7).")
    var mask: Int?

    @Flag(help: "Print the symbol as JSON instead of drawing it.")
    var json = false

    @OptionGroup var display: QRDisplayOptions

    struct Output: Encodable {
        let version: Int
        let level: String
        let mask: Int
        let size: Int
        let rows: [String]
    }

    private var parsedLevel: QRErrorCorrectionLevel? { QRErrorCorrectionLevel(rawValue: level.uppercased()) }

    private var parsedVersions: ClosedRange<QRVersion>? {
        guard let version else { return QRVersion.minimum...QRVersion.maximum }
        return QRVersion(version).map { $0...$0 }
    }

    func validate() throws {
        guard parsedLevel != nil else { throw ValidationError("--level must be L, M, Q or H") }
        guard parsedVersions != nil else { throw ValidationError("--version must be 1…40") }
        if let mask, QRMask(mask) == nil { throw ValidationError("--mask must be 0…7") }
    }

    func run() throws {
        guard let level = parsedLevel, let versions = parsedVersions else { throw CLIError("invalid options") }
        let fixedMask = mask.flatMap(QRMask.init)
        let code: QRCode
        do {
            code = try QRCode.encode(text: text, level: level, versions: versions, mask: fixedMask)
        } catch {
            throw CLIError(error.description)
        }
        if json {
            let rows = (0..<code.size).map { y in String((0..<code.size).map { code[$0, y] ? "1" : "0" }) }
            let output = Output(
                version: code.version.number, level: code.level.rawValue, mask: code.mask.reference, size: code.size,
                rows: rows)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            JSONLines.emitLine(String(decoding: try encoder.encode(output), as: UTF8.self))
        } else {
            print(display.renderer().render(code), terminator: "")
        }
    }
}
