import Foundation
import Testing
import InvisoTesting

/// `inviso qr` as the built executable: its JSON matrix equals python-qrcode's, and the
/// drawing follows `TERM` and `--no-unicode`.
@Suite("inviso qr CLI", .serialized, .timeLimit(.minutes(6)))
struct QRCommandTests {
    static func qr(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String)
    {
        let child = try ChildProcess(try NoiseInteropTests.invisoBinary(), ["qr"] + arguments, environment: environment)
        child.closeInput()
        let status = await child.waitForExit(timeout: 60) ?? -1
        return (status, child.transcript)
    }

    @Test("--json prints python-qrcode's PagedOut! symbol for each mask")
    func json() async throws {
        let symbol = try #require(QRVectorTests.vectors.symbols.first { $0.label == "PagedOut!" })
        for mask in [0, 2, 7] {
            let child = try ChildProcess(
                try NoiseInteropTests.invisoBinary(),
                ["qr", "PagedOut!", "--version", "1", "--mask", String(mask), "--json"])
            child.closeInput()
            #expect(await child.waitForExit(timeout: 60) == 0, "\(child.transcript)")
            let event = try #require(child.events.first, "\(child.transcript)")
            #expect(event["rows"] as? [String] == symbol.masks[mask])
            #expect(event["version"] as? Int == 1 && event["level"] as? String == "M" && event["mask"] as? Int == mask)
        }
    }

    @Test("ASCII with TERM=dumb or --no-unicode, half blocks otherwise; bad options exit non-zero")
    func drawing() async throws {
        let dumb = try await Self.qr(["hello"], environment: ["TERM": "dumb"])
        #expect(dumb.status == 0 && dumb.output.contains("##") && dumb.output.unicodeScalars.allSatisfy(\.isASCII))
        let flag = try await Self.qr(["hello", "--no-unicode"], environment: ["TERM": "xterm-256color"])
        #expect(flag.status == 0 && flag.output.contains("##") && !flag.output.contains("█"))
        let blocks = try await Self.qr(["hello"], environment: ["TERM": "xterm-256color"])
        #expect(blocks.status == 0 && blocks.output.contains("█") && !blocks.output.contains("#"))
        await #expect(try Self.qr(["hello", "--level", "Z"]).status != 0)
        await #expect(try Self.qr(["hello", "--mask", "8"]).status != 0)
        await #expect(try Self.qr(["hello", "--version", "41"]).status != 0)
        let tooLong = try await Self.qr([String(repeating: "a", count: 3_000)])
        #expect(tooLong.status != 0 && tooLong.output.contains("do not fit"))
    }
}
