//! Keeping a long session's resident memory flat.
//!
//! The viewer rebuilds its scene whenever a garment, the spacing, a fabric or the character
//! changes: every rebuild frees one set of particle arrays, spring lists, proxies and BVHs and
//! allocates another of a different size. glibc's allocator serves blocks of 128 KiB and more
//! from `mmap` at first, but raises that threshold to the size of each such block freed (its
//! "dynamic mmap threshold", see mallopt(3)), so after a few rebuilds the large arrays come from
//! the heap arenas, whose freed pages stay resident, fragmented between the blocks that are
//! still live. Measured with the monkey soak (tests/monkey.rs, seed 0x5eed0022): resident memory
//! grew 34.7 → 55.3 MiB from 30 to 90 simulated seconds while the live heap stayed at 23.1 MiB.
//!
//! [`tune_for_long_sessions`] fixes the threshold at 64 KiB, which turns the dynamic threshold
//! off (mallopt(3): setting M_MMAP_THRESHOLD disables it), so large arrays are mapped and
//! unmapped whole; [`release_free_memory`] hands the arenas' free pages back (malloc_trim(3)),
//! which the viewer does after each rebuild. Both are no-ops off glibc. The frame loop itself
//! allocates no large blocks (its buffers live in the workspace), so the extra `mmap` calls
//! happen while a scene is built: `strace -k -e trace=mmap` of a 20-frame `drape bench scene`
//! with this threshold found 391 maps, every one of them during the build (337 of them the
//! arm-sweep measurement of the garments' fit), none per frame.

use std::sync::Once;

/// Blocks at least this large are mapped on their own and returned to the system when freed.
pub const MMAP_THRESHOLD: usize = 64 * 1024;

/// Sets the allocator up for a process that rebuilds large scenes many times (the viewer).
/// Process-wide and idempotent.
pub fn tune_for_long_sessions() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes glibc's allocation parameters; it takes no pointers.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
        }
    });
}

/// Returns the allocator's free pages to the system (after a large structure was dropped).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}
