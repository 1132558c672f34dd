#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A terminal in raw mode for the interactive chat: keys arrive one by one, unechoed, and
/// Ctrl-C is a byte rather than a signal. ``restore()`` puts the saved settings back (also
/// call it before exiting on any path).
final class RawTerminal {
    private let fd: Int32
    private var saved: termios
    private var active = true

    /// Whether `fd` is a terminal.
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Switches `fd` to raw input; `nil` when it is not a terminal.
    init?(fd: Int32 = STDIN_FILENO) {
        var settings = termios()
        guard isatty(fd) == 1, tcgetattr(fd, &settings) == 0 else { return nil }
        self.fd = fd
        saved = settings
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(fd, TCSAFLUSH, &raw) == 0 else { return nil }
    }

    /// Puts back the settings saved at creation. Idempotent.
    func restore() {
        guard active else { return }
        active = false
        var settings = saved
        _ = tcsetattr(fd, TCSAFLUSH, &settings)
    }

    deinit { restore() }

    /// The size of the terminal on `fd` as (rows, columns), `nil` when unknown.
    static func size(of fd: Int32 = STDOUT_FILENO) -> (rows: Int, columns: Int)? {
        var size = winsize()
        #if canImport(Glibc)
        let result = ioctl(fd, UInt(TIOCGWINSZ), &size)
        #else
        let result = ioctl(fd, TIOCGWINSZ, &size)
        #endif
        guard result == 0, size.ws_row > 0, size.ws_col > 0 else { return nil }
        return (Int(size.ws_row), Int(size.ws_col))
    }
}
