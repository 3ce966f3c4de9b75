//! An I/O buffer aligned for O_DIRECT, allocated once per stream before the run starts.
//!
//! A large buffer is placed in a transparent huge page where the kernel has one: the kernel
//! builds an O_DIRECT request from the buffer's physical pages, and a device takes at most
//! `max_segments` runs of contiguous memory per request (128 on a loop device, 64 KiB each).
//! A 1 MiB buffer of 256 scattered 4 KiB pages is then sent as two requests of 512 KiB, one
//! of physically contiguous memory as one: which one a stream gets would otherwise follow the
//! host's memory, not the workload (bench/README.md).

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every buffer: enough for O_DIRECT on 4Kn devices.
pub const ALIGN: usize = 4096;

/// Buffers of at least this many bytes are placed in transparent huge pages: a buffer of 32
/// scattered 4 KiB pages already fills a request on a device that takes 32 segments.
pub const HUGE_FROM: usize = 128 << 10;

/// The size and alignment of a transparent huge page on x86-64 and arm64 with 4 KiB pages.
const HUGE: usize = 2 << 20;

/// A heap buffer whose start is aligned to [`ALIGN`] (to a huge page from [`HUGE_FROM`]).
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
    len: usize,
}

/// `size` bytes (a multiple of [`HUGE`]) of fresh anonymous memory starting on a huge page,
/// advised for huge pages and then zeroed (which faults them in); `None` where it cannot be
/// mapped.
fn huge_map(size: usize) -> Option<*mut u8> {
    use rustix::mm::{madvise, mmap_anonymous, munmap, Advice, MapFlags, ProtFlags};
    // Map a huge page more than needed and give back what lies outside the aligned part.
    let span = size + HUGE;
    let prot = ProtFlags::READ | ProtFlags::WRITE;
    // SAFETY: a fresh private anonymous mapping, placed by the kernel.
    let base = unsafe { mmap_anonymous(std::ptr::null_mut(), span, prot, MapFlags::PRIVATE) }
        .ok()? as usize;
    let start = base.next_multiple_of(HUGE);
    // SAFETY: both ranges lie in the mapping just made and nothing refers to them.
    unsafe {
        if start > base {
            let _ = munmap(base as *mut _, start - base);
        }
        let end = start + size;
        if base + span > end {
            let _ = munmap(end as *mut _, base + span - end);
        }
    }
    let ptr = start as *mut u8;
    // SAFETY: the range is this mapping's own. The advice is a hint: a kernel without
    // transparent huge pages refuses it and the buffer keeps small pages.
    let _ = unsafe { madvise(ptr.cast(), size, Advice::LinuxHugepage) };
    // SAFETY: valid for `size` bytes; writing faults the pages in.
    unsafe { ptr.write_bytes(0, size) };
    Some(ptr)
}

// SAFETY: the buffer exclusively owns its allocation.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (len > 0). From [`HUGE_FROM`] bytes it is mapped on its
    /// own, spanning whole huge pages, advised as such before its first touch and touched now,
    /// so the kernel places it (where it can) before the run rather than in its first I/O.
    pub fn new(len: usize) -> Self {
        let len = len.max(1);
        if len >= HUGE_FROM {
            let layout =
                Layout::from_size_align(len.div_ceil(HUGE) * HUGE, HUGE).expect("buffer layout");
            if let Some(ptr) = huge_map(layout.size()) {
                return AlignedBuf { ptr, layout, len };
            }
        }
        let layout = Layout::from_size_align(len, ALIGN).expect("buffer layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout, len }
    }

    /// Fills the buffer with pseudo-random bytes, so writes are not compressible or dedupable.
    pub fn fill_random(&mut self, seed: u64) {
        let mut rng = super::rng::SplitMix64::new(seed);
        for chunk in self.as_mut_slice().chunks_mut(8) {
            let v = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// Whether the buffer was mapped by [`huge_map`] (only those are aligned to a huge page).
    fn mapped(&self) -> bool {
        self.layout.align() == HUGE
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() >= len bytes for the buffer's lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.mapped() {
            // SAFETY: mapped by `huge_map` with this size, and no longer used.
            let _ = unsafe { rustix::mm::munmap(self.ptr.cast(), self.layout.size()) };
        } else {
            // SAFETY: allocated with this layout in `new`.
            unsafe { dealloc(self.ptr, self.layout) }
        }
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

    #[test]
    fn a_small_buffer_keeps_its_length_and_small_pages() {
        let b = AlignedBuf::new(4096);
        assert_eq!(b.as_slice().len(), 4096);
        assert_eq!(b.layout.size(), 4096);
    }

    #[test]
    fn a_large_buffer_spans_huge_pages_the_kernel_may_use() {
        let b = AlignedBuf::new(1 << 20);
        assert_eq!(
            b.as_slice().len(),
            1 << 20,
            "the I/O length is the one asked for"
        );
        let start = b.as_slice().as_ptr() as usize;
        assert_eq!(start % HUGE, 0, "starts on a huge page");
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if thp.is_empty() || thp.contains("[never]") {
            let why = "this kernel has transparent huge pages off";
            assert!(std::env::var_os("CI").is_none(), "skipped under CI: {why}");
            println!("skipped the smaps check: {why}");
            return;
        }
        // The mapping holding the buffer is advised for huge pages (smaps: THPeligible 1).
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let mut inside = false;
        let mut eligible = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                    {
                        inside = lo <= start && start < hi;
                        continue;
                    }
                }
            }
            if inside {
                if let Some(v) = line.strip_prefix("THPeligible:") {
                    eligible = Some(v.trim().to_string());
                }
            }
        }
        assert_eq!(
            eligible.as_deref(),
            Some("1"),
            "the buffer's mapping is THP-eligible"
        );
    }
}
