/// BitChat's length padding of encoded packets.
///
/// Facts (permissionlesstech/bitchat
/// localPackages/BitFoundation/Sources/BitFoundation/MessagePadding.swift@2baed6903fc04dbd901cb24ee266002321de194e):
/// - block sizes 256, 512, 1024, 2048; the target is the smallest block with
///   `count + 16 <= block` (16 bytes reserved "for an AEAD tag"); above 2032 bytes there
///   is no target;
/// - PKCS#7 style: `n` bytes each equal to `n`, so `n` is 1…255; a frame that would need
///   more than 255 bytes to reach its block is sent unpadded;
/// - BitChat's decoders try the bytes as they are first, then strip a valid PKCS#7 tail
///   and try again. Ours reads the header, which says exactly where the packet ends, and
///   then accepts only a valid PKCS#7 tail (see ``isValidPadding(_:)``).
enum MessagePadding {
    static let blockSizes = [256, 512, 1024, 2048]

    /// How many padding bytes BitChat appends to a frame of `count` bytes (0 when none).
    static func paddingLength(forFrameOf count: Int) -> Int {
        guard let block = blockSizes.first(where: { count + 16 <= $0 }) else { return 0 }
        let needed = block - count
        return needed <= 255 ? needed : 0
    }

    /// Appends BitChat's padding to `frame`.
    static func pad(_ frame: inout [UInt8]) {
        let count = paddingLength(forFrameOf: frame.count)
        if count > 0 { frame.append(contentsOf: repeatElement(UInt8(count), count: count)) }
    }

    /// Whether `tail`, the bytes after a packet's last field, is a valid PKCS#7 pad: 1…255
    /// bytes, each equal to the count.
    static func isValidPadding(_ tail: ArraySlice<UInt8>) -> Bool {
        guard let last = tail.last, last != 0, Int(last) == tail.count else { return false }
        return tail.allSatisfy { $0 == last }
    }
}
