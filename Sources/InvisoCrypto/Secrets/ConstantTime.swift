/// Comparisons whose running time does not depend on the bytes compared.
public enum ConstantTime {
    /// Returns whether `a` and `b` hold the same bytes. The time taken depends only on the
    /// lengths (unequal lengths return `false` at once: lengths are not secret here).
    @inline(never)
    public static func equals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<a.count {
            difference |= a[index] ^ b[index]
        }
        return difference == 0
    }

    /// Returns whether two byte collections are equal, in time that depends only on their lengths.
    /// Inlinable so callers get a specialised copy: contiguous collections (arrays, array
    /// slices, `Data`) are compared in place without copying.
    @inlinable
    public static func equals<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool
    where A.Element == UInt8, B.Element == UInt8 {
        let direct = a.withContiguousStorageIfAvailable { left in
            b.withContiguousStorageIfAvailable { right in
                equals(UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right))
            }
        }
        if let direct, let result = direct { return result }
        let left = Array(a)
        let right = Array(b)
        return left.withUnsafeBytes { l in right.withUnsafeBytes { r in equals(l, r) } }
    }

    /// Returns whether every byte is zero, in time that depends only on the length.
    @inline(never)
    public static func isAllZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var accumulator: UInt8 = 0
        for byte in bytes { accumulator |= byte }
        return accumulator == 0
    }
}

/// Overwrites memory with zeros in a way the optimiser may not remove.
package enum SecureWipe {
    /// Zeroes `buffer`. The function is never inlined, so callers cannot see that the
    /// memory dies right after and the optimiser cannot drop the stores as dead; inside
    /// it the buffer is an opaque escaping pointer, so the `memset` stays.
    @inline(never)
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count > 0 else { return }
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
    }

    /// Zeroes an array's storage in place.
    @inline(never)
    package static func wipe(_ array: inout [UInt8]) {
        array.withUnsafeMutableBytes { wipe($0) }
    }
}
