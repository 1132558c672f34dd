/// The chat's input line: bytes typed in raw terminal mode in, edits and submitted lines
/// out. A value type with no I/O, so every key is testable.
///
/// Keys: printable UTF-8 is inserted at the cursor; Backspace (DEL or BS) deletes the
/// character before the cursor, Delete (`ESC [3~`) the one under it; Left/Right and
/// Home/End (also Ctrl-A/Ctrl-E) move; Ctrl-U clears; Ctrl-W deletes the word before the
/// cursor; Enter submits; Ctrl-C interrupts; Ctrl-D ends input on an empty line (else
/// deletes forward). Other controls and unknown escape sequences are ignored. A line is
/// limited to `limit` characters.
struct LineEditor {
    enum Event: Equatable {
        /// The line changed (redraw it).
        case edited
        /// Enter: the line, now cleared.
        case submitted(String)
        /// Ctrl-C.
        case interrupted
        /// Ctrl-D on an empty line.
        case endOfInput
    }

    private(set) var characters: [Character] = []
    /// Cursor position in `characters`.
    private(set) var cursor = 0
    let limit: Int

    /// Bytes of an unfinished UTF-8 character or escape sequence.
    private var pending: [UInt8] = []

    init(limit: Int = 4_096) {
        self.limit = limit
    }

    var text: String { String(characters) }

    /// Feeds typed bytes; returns what happened, in order.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if let event = feed(byte) { events.append(event) }
        }
        return events
    }

    private mutating func feed(_ byte: UInt8) -> Event? {
        if !pending.isEmpty {
            pending.append(byte)
            if pending[0] == 0x1B { return escape() }
            return utf8()
        }
        switch byte {
        case 0x1B:
            pending = [byte]
            return nil
        case 0x0D, 0x0A:
            let line = text
            characters = []
            cursor = 0
            return .submitted(line)
        case 0x03:
            return .interrupted
        case 0x04:
            if characters.isEmpty { return .endOfInput }
            return deleteForward()
        case 0x7F, 0x08:
            guard cursor > 0 else { return nil }
            characters.remove(at: cursor - 1)
            cursor -= 1
            return .edited
        case 0x01:
            cursor = 0
            return .edited
        case 0x05:
            cursor = characters.count
            return .edited
        case 0x15:
            characters.removeSubrange(0..<cursor)
            cursor = 0
            return .edited
        case 0x17:
            var start = cursor
            while start > 0, characters[start - 1] == " " { start -= 1 }
            while start > 0, characters[start - 1] != " " { start -= 1 }
            characters.removeSubrange(start..<cursor)
            cursor = start
            return .edited
        case 0x00..<0x20:
            return nil
        case 0x20..<0x80:
            return insert(Character(Unicode.Scalar(byte)))
        default:
            pending = [byte]
            return utf8()
        }
    }

    private mutating func insert(_ character: Character) -> Event? {
        guard characters.count < limit else { return nil }
        // A combining mark joins the character before it.
        if cursor > 0, let scalar = character.unicodeScalars.first,
            [.nonspacingMark, .spacingMark, .enclosingMark].contains(scalar.properties.generalCategory)
        {
            characters[cursor - 1] = Character(String(characters[cursor - 1]) + String(character))
            return .edited
        }
        characters.insert(character, at: cursor)
        cursor += 1
        return .edited
    }

    private mutating func deleteForward() -> Event? {
        guard cursor < characters.count else { return nil }
        characters.remove(at: cursor)
        return .edited
    }

    /// A multi-byte UTF-8 character: inserted when complete, dropped when invalid.
    private mutating func utf8() -> Event? {
        let lead = pending[0]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default:
            pending = []
            return nil
        }
        if pending.count > 1, pending.last! & 0xC0 != 0x80 {
            pending = []
            return nil
        }
        guard pending.count == length else { return nil }
        let bytes = pending
        pending = []
        guard let string = String(validating: bytes, as: UTF8.self), let scalar = string.unicodeScalars.first,
            scalar.properties.generalCategory != .control
        else { return nil }
        return insert(Character(scalar))
    }

    /// `ESC [ … final` (CSI) and `ESC O x` (SS3) sequences; anything else is dropped.
    private mutating func escape() -> Event? {
        if pending.count == 2 {
            if pending[1] != UInt8(ascii: "[") && pending[1] != UInt8(ascii: "O") { pending = [] }
            return nil
        }
        let last = pending[pending.count - 1]
        if pending[1] == UInt8(ascii: "O") || (0x40...0x7E).contains(last) {
            let sequence = pending
            pending = []
            return csi(sequence)
        }
        if pending.count > 16 { pending = [] }
        return nil
    }

    private mutating func csi(_ sequence: [UInt8]) -> Event? {
        let body = String(decoding: sequence.dropFirst(2), as: UTF8.self)
        switch body {
        case "D":
            guard cursor > 0 else { return nil }
            cursor -= 1
        case "C":
            guard cursor < characters.count else { return nil }
            cursor += 1
        case "H", "1~", "7~":
            cursor = 0
        case "F", "4~", "8~":
            cursor = characters.count
        case "3~":
            return deleteForward()
        default:
            return nil
        }
        return .edited
    }
}

extension LineEditor {
    /// The input line on terminal row `row`: the prompt and the part of the input around
    /// the cursor that fits in `columns`; the cursor is left where the next character goes.
    func rendered(row: Int, columns: Int, prompt: String) -> String {
        let room = columns - TerminalText.width(of: prompt) - 1
        let before = TerminalText.tail(String(characters[..<cursor]), columns: room)
        let after = TerminalText.fit(String(characters[cursor...]), columns: room - TerminalText.width(of: before))
        let cursorColumn = TerminalText.width(of: prompt) + TerminalText.width(of: before) + 1
        return "\u{1B}[\(row);1H\u{1B}[2K\(prompt)\(before)\(after)\u{1B}[\(row);\(cursorColumn)H"
    }
}
