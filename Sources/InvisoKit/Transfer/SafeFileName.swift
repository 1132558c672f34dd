/// Turns a name a sender chose into a plain file name that cannot leave the downloads
/// folder or hide what it is.
///
/// Only the last component counts (after `/` or `\`); control and format characters (NUL,
/// newlines, bidirectional overrides such as U+202E) are removed; leading dots and
/// surrounding spaces go (no `..`, no hidden files); an empty result becomes `file`; and the
/// name is cut to at most ``maxBytes`` UTF-8 bytes, keeping a short extension.
public enum SafeFileName {
    /// The longest name produced, in UTF-8 bytes.
    public static let maxBytes = 200

    /// The safe form of `name`.
    public static func sanitize(_ name: String) -> String {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in last.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: continue
            default: scalars.append(scalar)
            }
        }
        var cleaned = String(scalars).trimmingSpaces()
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        cleaned = cleaned.trimmingSpaces()
        if cleaned.isEmpty { cleaned = "file" }
        return truncated(cleaned)
    }

    /// `name` with ` (n)` before its extension: the n-th alternative when `name` exists.
    public static func numbered(_ name: String, _ n: Int) -> String {
        let (stem, ext) = split(name)
        return truncated(stem, reserving: " (\(n))".utf8.count + ext.utf8.count) + " (\(n))" + ext
    }

    private static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        let ext = String(name[dot...])
        guard ext.utf8.count <= 16 else { return (name, "") }
        return (String(name[..<dot]), ext)
    }

    private static func truncated(_ name: String) -> String {
        guard name.utf8.count > maxBytes else { return name }
        let (stem, ext) = split(name)
        return truncated(stem, reserving: ext.utf8.count) + ext
    }

    /// `stem` cut (at a character boundary) so that it plus `reserving` bytes fit.
    private static func truncated(_ stem: String, reserving: Int) -> String {
        var result = ""
        var count = 0
        for character in stem {
            let size = character.utf8.count
            guard count + size + reserving <= maxBytes else { break }
            result.append(character)
            count += size
        }
        return result.isEmpty ? "file" : result
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var view = Substring(self)
        while let first = view.first, first.isWhitespace { view.removeFirst() }
        while let last = view.last, last.isWhitespace { view.removeLast() }
        return String(view)
    }
}
