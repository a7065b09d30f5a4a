//! Hardware facts, declared where they are used and checked elsewhere.
//!
//! Every layout, register offset, bitfield and opcode that barebell relies on
//! is a claim about hardware that nobody on this project can observe directly.
//! The only independent witness is public source: the Linux amdgpu headers,
//! ROCR's HSA headers, `vfio.h`. Each library crate therefore exports a
//! `FACTS: &[Fact]` table whose *values come from the Rust code itself*
//! (`size_of`, `offset_of!`, the register constants the driver programs), and
//! whose *probes* name the C expression that yields the same fact from the
//! public header. `cargo xtask conformance` compiles those probes against the
//! real headers and diffs the two.
//!
//! The crate is `no_std` and dependency-free so that the `no_std` library
//! crates can export their tables without pulling anything in.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

/// Which public header a fact is checked against.
///
/// The string is a key that `xtask` resolves to an include path and the
/// shims needed to compile that header in user space (see
/// `xtask/src/conformance.rs`). Keeping the key symbolic lets one fact table
/// serve whatever path the header cache happens to live at.
pub type HeaderKey = &'static str;

/// How to obtain the header's own value for a fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// `sizeof(TYPE)`.
    Size(&'static str),
    /// `offsetof(TYPE, FIELD)`; FIELD may be a nested designator (`a.b`).
    Offset(&'static str, &'static str),
    /// Any integral constant expression: a macro, an enumerator, or an
    /// expression over them such as `(1u << SHIFT)`.
    Const(&'static str),
}

/// One claim: "the header `header` says `probe` evaluates to `value`".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fact {
    pub header: HeaderKey,
    pub probe: Probe,
    /// The value the Rust code uses. Negative C values are compared after
    /// conversion to `u64`, exactly as the generated C prints them.
    pub value: u64,
}

impl Fact {
    pub const fn size(header: HeaderKey, c_type: &'static str, value: usize) -> Self {
        Fact {
            header,
            probe: Probe::Size(c_type),
            value: value as u64,
        }
    }

    pub const fn offset(
        header: HeaderKey,
        c_type: &'static str,
        c_field: &'static str,
        value: usize,
    ) -> Self {
        Fact {
            header,
            probe: Probe::Offset(c_type, c_field),
            value: value as u64,
        }
    }

    pub const fn constant(header: HeaderKey, c_expr: &'static str, value: u64) -> Self {
        Fact {
            header,
            probe: Probe::Const(c_expr),
            value,
        }
    }
}

/// Writes the C expression for a probe. The same text doubles as the fact's
/// name in reports, so a mismatch names exactly what was compiled.
impl core::fmt::Display for Probe {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Probe::Size(t) => write!(f, "sizeof({t})"),
            Probe::Offset(t, field) => write!(f, "offsetof({t}, {field})"),
            Probe::Const(e) => write!(f, "{e}"),
        }
    }
}

/// Declares a size fact and all listed field offsets of one Rust struct
/// against one C struct, taking the values from the Rust layout.
///
/// ```
/// #[repr(C)]
/// struct Hdr { a: u32, b: u32 }
/// const F: [barebell_facts::Fact; 3] =
///     barebell_facts::layout_facts!("x.h", Hdr = "struct hdr" { a = "a", b = "b" });
/// assert_eq!(F[2].value, 4);
/// ```
#[macro_export]
macro_rules! layout_facts {
    ($header:expr, $ty:ty = $cty:literal { $($field:ident = $cfield:literal),* $(,)? }) => {
        [
            $crate::Fact::size($header, $cty, ::core::mem::size_of::<$ty>()),
            $( $crate::Fact::offset($header, $cty, $cfield, ::core::mem::offset_of!($ty, $field)), )*
        ]
    };
}

/// Concatenates fact arrays from several modules into one `&'static [Fact]`
/// at compile time.
#[macro_export]
macro_rules! fact_table {
    ($($part:expr),* $(,)?) => {{
        const LEN: usize = 0 $( + $part.len() )*;
        const TABLE: [$crate::Fact; LEN] = {
            let mut out = [$crate::Fact::constant("", "0", 0); LEN];
            let mut at = 0;
            $(
                let part: &[$crate::Fact] = &$part;
                let mut i = 0;
                while i < part.len() {
                    out[at] = part[i];
                    at += 1;
                    i += 1;
                }
            )*
            out
        };
        &TABLE
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    struct Two {
        a: u8,
        b: u32,
    }

    #[test]
    fn layout_facts_take_values_from_rust_layout() {
        let f = layout_facts!("t.h", Two = "struct two" { a = "a", b = "b" });
        assert_eq!(f[0].probe, Probe::Size("struct two"));
        assert_eq!(f[0].value, 8);
        assert_eq!(f[2].probe, Probe::Offset("struct two", "b"));
        assert_eq!(f[2].value, 4);
    }

    #[test]
    fn fact_table_concatenates_in_order() {
        const A: [Fact; 1] = [Fact::constant("a.h", "A", 1)];
        const B: [Fact; 2] = [Fact::constant("b.h", "B", 2), Fact::constant("b.h", "C", 3)];
        let t: &[Fact] = fact_table!(A, B);
        let vals: [u64; 3] = [t[0].value, t[1].value, t[2].value];
        assert_eq!(vals, [1, 2, 3]);
        assert_eq!(t[2].header, "b.h");
    }

    #[test]
    fn probe_prints_as_c() {
        extern crate std;
        use std::string::ToString;
        assert_eq!(
            Probe::Offset("amd_queue_t", "read_dispatch_id").to_string(),
            "offsetof(amd_queue_t, read_dispatch_id)"
        );
        assert_eq!(Probe::Size("struct x").to_string(), "sizeof(struct x)");
    }
}
