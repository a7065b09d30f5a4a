//! Copies out of device-writable bytes into owned vectors, over the
//! runtime's [`DmaView`] (volatile accesses, no Rust reference to bytes
//! the device writes; see `barebell::mem::view`).

pub use barebell::mem::DmaView;

/// Owned copies of a view's bytes.
pub trait ViewToVec {
    /// The first `n` bytes (all of them if fewer).
    fn head(&self, n: usize) -> Vec<u8>;
    /// Every byte.
    fn to_vec(&self) -> Vec<u8>;
}

impl ViewToVec for DmaView<'_> {
    fn head(&self, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n.min(self.len())];
        // `out` fits by construction.
        let _ = self.read(0, &mut out);
        out
    }

    fn to_vec(&self) -> Vec<u8> {
        self.head(self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::{DmaView, ViewToVec};

    #[test]
    fn copies_out_what_was_written() {
        let mut big = [0u8; 67];
        let w = DmaView::new(&mut big[1..]);
        let src: Vec<u8> = (0..66u8).collect();
        assert!(w.write(0, &src));
        assert_eq!(w.to_vec(), src);
        assert_eq!(w.head(9), src[..9]);
        assert_eq!(w.head(100).len(), 66);
    }
}
