extension ConstantTime {
    /// A secret boolean kept as a word mask (all zeros or all ones), so that code that
    /// combines and uses it can stay branch-free.
    ///
    /// Build choices with the comparison helpers, combine them with `&`, `|` and `!`, and
    /// spend them in masked selects (`FieldElement.select`, `conditionalSwap`). Only turn a
    /// choice into a `Bool` (``isTrue``) when the answer is public, such as whether a
    /// signature verified. This is best effort: the Swift optimiser gives no guarantee that a
    /// masked select stays branch-free, though it does in practice for the code here.
    package struct Choice: Sendable {
        /// `0` for false, `UInt64.max` for true.
        package let mask: UInt64

        /// Wraps a mask; it must be `0` or `UInt64.max`.
        @inline(__always)
        package init(mask: UInt64) {
            self.mask = mask
        }

        /// Makes a choice from a bit that is `0` or `1`.
        @inline(__always)
        package init(bit: UInt64) {
            self.mask = 0 &- bit
        }

        /// The public constant true.
        package static let `true` = Choice(mask: .max)
        /// The public constant false.
        package static let `false` = Choice(mask: 0)

        /// The choice as `0` or `1`.
        @inline(__always)
        package var bit: UInt64 { mask & 1 }

        /// Declassifies the choice. Branching on the result reveals it.
        @inline(__always)
        package var isTrue: Bool { mask != 0 }

        /// True when `value` is zero.
        @inline(__always)
        package static func isZero(_ value: UInt64) -> Choice {
            // (v | -v) has its top bit set exactly when v != 0.
            let nonZeroBit = (value | (0 &- value)) >> 63
            return Choice(bit: nonZeroBit ^ 1)
        }

        /// True when `a == b`.
        @inline(__always)
        package static func equal(_ a: UInt64, _ b: UInt64) -> Choice {
            isZero(a ^ b)
        }

        /// Logical and.
        @inline(__always)
        package static func & (lhs: Choice, rhs: Choice) -> Choice {
            Choice(mask: lhs.mask & rhs.mask)
        }

        /// Logical or.
        @inline(__always)
        package static func | (lhs: Choice, rhs: Choice) -> Choice {
            Choice(mask: lhs.mask | rhs.mask)
        }

        /// Logical exclusive or.
        @inline(__always)
        package static func ^ (lhs: Choice, rhs: Choice) -> Choice {
            Choice(mask: lhs.mask ^ rhs.mask)
        }

        /// Logical not.
        @inline(__always)
        package static prefix func ! (choice: Choice) -> Choice {
            Choice(mask: ~choice.mask)
        }

        /// Returns `b` when the choice is true, `a` otherwise, without branching.
        @inline(__always)
        package func select(_ a: UInt64, _ b: UInt64) -> UInt64 {
            a ^ (mask & (a ^ b))
        }
    }
}
