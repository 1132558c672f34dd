import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `inviso offline` reads pasted text from and puts what it writes: arguments,
/// standard input, the system clipboard, the terminal.
enum OfflineIO {
    /// The most text read from standard input (twice what the paste reader accepts).
    static let limit = 1 << 20

    /// The text argument, or standard input when it is `-` or absent, or the clipboard.
    ///
    /// - Throws: ``CLIError`` when there is no text, or no clipboard tool.
    static func text(argument: String?, paste: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if paste {
            guard argument == nil || argument == "-" else { throw CLIError("give either TEXT or --paste, not both") }
            return try Clipboard.paste(environment: environment)
        }
        if let argument, argument != "-" { return argument }
        if isatty(STDIN_FILENO) == 1 {
            FileHandle.standardError.write(Data("Paste the text, then press Ctrl-D on an empty line:\n".utf8))
        }
        // Bounded: no envelope text is anywhere near this.
        var data = Data()
        while true {
            let chunk = FileHandle.standardInput.readData(ofLength: 64 * 1024)
            if chunk.isEmpty { break }
            data.append(chunk)
            guard data.count <= limit else { throw CLIError("the input is larger than any message can be") }
        }
        guard let text = String(data: data, encoding: .utf8) else { throw CLIError("the input is not UTF-8 text") }
        return text
    }

    /// Whether standard input and output are a terminal (so we may ask).
    static var interactive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1 }

    /// Asks a question on the terminal; `nil` at end of input.
    static func ask(_ question: String) -> String? {
        FileHandle.standardError.write(Data(question.utf8))
        return readLine(strippingNewline: true)
    }

    /// A note on standard error (text mode's side channel: hints, warnings, repairs).
    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Reads a passphrase from the terminal without echo; `nil` without a terminal.
    static func passphrase(_ prompt: String) -> String? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        FileHandle.standardError.write(Data(prompt.utf8))
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return readLine(strippingNewline: true)
    }
}

/// The system clipboard through whichever command-line tool exists: `wl-copy`/`wl-paste`
/// (Wayland), `xclip` (X11), `pbcopy`/`pbpaste` (macOS).
enum Clipboard {
    struct Tool {
        let copy: [String]
        let paste: [String]
    }

    static let tools: [(needs: String?, tool: Tool)] = [
        ("WAYLAND_DISPLAY", Tool(copy: ["wl-copy"], paste: ["wl-paste", "--no-newline"])),
        ("DISPLAY", Tool(copy: ["xclip", "-selection", "clipboard", "-in"], paste: ["xclip", "-selection", "clipboard", "-out"])),
        (nil, Tool(copy: ["pbcopy"], paste: ["pbpaste"])),
    ]

    /// The first tool whose display is there and whose program is on the `PATH`.
    static func tool(environment: [String: String]) -> (tool: Tool, copyPath: String, pastePath: String)? {
        for (needs, tool) in tools {
            if let needs, (environment[needs] ?? "").isEmpty { continue }
            if let copy = executable(tool.copy[0], environment: environment),
                let paste = executable(tool.paste[0], environment: environment)
            {
                return (tool, copy, paste)
            }
        }
        return nil
    }

    static func executable(_ name: String, environment: [String: String]) -> String? {
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    static let missing = CLIError(
        "no clipboard tool found: install wl-clipboard (Wayland) or xclip (X11), or copy the text by hand")

    static func copy(_ text: String, environment: [String: String]) throws {
        guard let (tool, path, _) = tool(environment: environment) else { throw missing }
        _ = try run(path, Array(tool.copy.dropFirst()), input: Data(text.utf8), environment: environment)
    }

    static func paste(environment: [String: String]) throws -> String {
        guard let (tool, _, path) = tool(environment: environment) else { throw missing }
        let data = try run(path, Array(tool.paste.dropFirst()), input: nil, environment: environment)
        guard let text = String(data: data, encoding: .utf8) else { throw CLIError("the clipboard holds no text") }
        return text
    }

    private static func run(_ path: String, _ arguments: [String], input: Data?, environment: [String: String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        // Copying: wl-copy and xclip fork a child that serves the clipboard and keeps its
        // standard output, so nothing reads theirs (reading would wait for that child).
        let output = Pipe()
        let inputPipe = Pipe()
        process.standardOutput = input == nil ? output : FileHandle.nullDevice
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        do {
            try process.run()
        } catch {
            throw CLIError("could not run \(path)")
        }
        if let input {
            inputPipe.fileHandleForWriting.write(input)
            try? inputPipe.fileHandleForWriting.close()
        }
        let data = input == nil ? output.fileHandleForReading.readDataToEndOfFile() : Data()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIError("\(URL(fileURLWithPath: path).lastPathComponent) failed (status \(process.terminationStatus))")
        }
        return data
    }
}
