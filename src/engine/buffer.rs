//! An I/O buffer aligned for O_DIRECT, allocated once per stream before the run starts.

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every buffer: enough for O_DIRECT on 4Kn devices.
pub const ALIGN: usize = 4096;

/// A heap buffer whose start is aligned to [`ALIGN`].
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer exclusively owns its allocation.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (len > 0).
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), ALIGN).expect("buffer layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }

    /// Fills the buffer with pseudo-random bytes, so writes are not compressible or dedupable.
    pub fn fill_random(&mut self, seed: u64) {
        let mut rng = super::rng::SplitMix64::new(seed);
        for chunk in self.as_mut_slice().chunks_mut(8) {
            let v = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() bytes for the buffer's lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_filled() {
        let mut b = AlignedBuf::new(1 << 20);
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        b.fill_random(7);
        assert!(b.as_slice().iter().filter(|&&x| x == 0).count() < 10_000);
    }
}
