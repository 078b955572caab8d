//! A metrics.csv read through a memory map, guarded so that a file cut short while it is mapped cannot bring the
//! process down.
//!
//! Reading a file with `pread` copies every byte from the page cache into the reader's buffer. For the cells of a
//! cold index that copy was about a seventh of the processor time (two 25 MB masters of the demo data); a map lets
//! the parser read the page cache itself. Measured in alternating runs of `cellscope index --cells-only` on the
//! demo's V3 runs: 42.3 ms against 47.3 ms (medians of 12 runs each).
//!
//! The danger of a map is `SIGBUS`: a page past the end of a file that another process truncated, or one the disk
//! cannot read, faults with a signal whose default action kills the process. Here every live map is registered,
//! and a handler installed once for `SIGBUS` looks the faulting address up: inside a registered map, it puts zero
//! pages over the rest of that map, marks it damaged and returns, so the reading goes on over zeros; the caller
//! sees [`Mapped::damaged`] and throws that reading away (reading the file again with `pread`, which says what
//! went wrong). A fault anywhere else goes to the handler that was there before (the Rust runtime's, or the
//! default), exactly as without this module.

use std::fs::File;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many files can be mapped at once: more than the threads that parse (one file each); a reader that finds
/// every slot taken reads with `pread` instead.
const SLOTS: usize = 64;

/// One registered map: `[start, end)` of the address space while `start` is not 0.
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    damaged: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    damaged: AtomicBool::new(false),
};

static REGISTRY: [Slot; SLOTS] = [FREE; SLOTS];

/// The `SIGBUS` action before ours, written once before ours is installed and only read after.
static mut PREVIOUS: Option<libc::sigaction> = None;
static INSTALL: Once = Once::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The page size, read once before the handler is installed (the handler itself only loads it).
static PAGE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// A file mapped read-only. Its bytes are the file's as long as [`Mapped::damaged`] is false after reading them.
pub(crate) struct Mapped {
    start: *mut std::ffi::c_void,
    length: usize,
    slot: usize,
}

// SAFETY: the map is read-only and owned by this value; reading it from several threads at once is what the
// chunked parse does, and unmapping happens only in `drop`, when no borrow of its bytes is left.
unsafe impl Send for Mapped {}
unsafe impl Sync for Mapped {}

impl Mapped {
    /// Maps the first `length` bytes of `file` (its size when reading began). `None` when the file cannot be
    /// mapped or every slot is taken: the caller reads it another way.
    pub(crate) fn new(file: &File, length: u64) -> Option<Mapped> {
        let length = usize::try_from(length).ok().filter(|length| *length > 0)?;
        install();
        if !INSTALLED.load(Ordering::Acquire) {
            return None;
        }
        let slot = REGISTRY.iter().position(|slot| {
            slot.end
                .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        // SAFETY: a fresh read-only private map of an open file, at an address the kernel chooses.
        let mapped = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                length,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::PRIVATE,
                file,
                0,
            )
        };
        let Ok(start) = mapped else {
            REGISTRY[slot].end.store(0, Ordering::Release);
            return None;
        };
        let entry = &REGISTRY[slot];
        entry.damaged.store(false, Ordering::Relaxed);
        // `end` before `start`: the handler reads `start` first, so a start it sees comes with its own end.
        entry.end.store(start as usize + length, Ordering::Release);
        entry.start.store(start as usize, Ordering::Release);
        Some(Mapped {
            start,
            length,
            slot,
        })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `length` bytes are mapped readable at `start` until `drop`; pages a fault replaced read as zeros.
        unsafe { std::slice::from_raw_parts(self.start.cast::<u8>(), self.length) }
    }

    /// A fault in the map was caught while it was read (the file became shorter, or a page could not be read):
    /// what was read from it is not the file.
    pub(crate) fn damaged(&self) -> bool {
        REGISTRY[self.slot].damaged.load(Ordering::Acquire)
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        let entry = &REGISTRY[self.slot];
        entry.start.store(0, Ordering::Release);
        // SAFETY: the map made in `new`, unmapped once, with no borrow of its bytes left.
        unsafe {
            let _ = rustix::mm::munmap(self.start, self.length);
        }
        entry.end.store(0, Ordering::Release);
    }
}

/// Installs the `SIGBUS` handler once, keeping the action it replaces.
fn install() {
    INSTALL.call_once(|| {
        PAGE_BYTES.store(rustix::param::page_size(), Ordering::Release);
        // SAFETY: `sigaction` with a zeroed (empty-mask) action whose handler has the `SA_SIGINFO` signature; the
        // previous action is stored before the new one can run, and `PREVIOUS` is not written again.
        unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            // On the alternate stack the Rust runtime sets up for each thread, as its own handler is.
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return;
            }
            PREVIOUS = Some(previous);
            if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0 {
                INSTALLED.store(true, Ordering::Release);
            }
        }
    });
}

/// The `SIGBUS` handler. Only async-signal-safe work: atomic loads and stores, and `mmap` (a system call).
extern "C" fn on_sigbus(signal: i32, info: *mut libc::siginfo_t, context: *mut std::ffi::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an `SA_SIGINFO` handler.
    let address = unsafe { (*info).si_addr() } as usize;
    for entry in &REGISTRY {
        let start = entry.start.load(Ordering::Acquire);
        let end = entry.end.load(Ordering::Acquire);
        // Read again: a slot freed or reused between the two loads is not taken for a map it no longer is.
        if start == 0 || entry.start.load(Ordering::Acquire) != start {
            continue;
        }
        if (start..end).contains(&address) {
            let page = address & !(PAGE_BYTES.load(Ordering::Acquire) - 1);
            // SAFETY: the pages replaced belong to a registered map, which only its owner unmaps (and not while
            // one of its pages is being read, as now); zero pages take their place.
            let zeroed = unsafe {
                rustix::mm::mmap_anonymous(
                    page as *mut std::ffi::c_void,
                    end - page,
                    rustix::mm::ProtFlags::READ,
                    rustix::mm::MapFlags::PRIVATE | rustix::mm::MapFlags::FIXED,
                )
            };
            if zeroed.is_ok() {
                entry.damaged.store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not a fault of a registered map: what would have happened without this module happens.
    // SAFETY: `PREVIOUS` was written before this handler was installed and is never written again.
    let previous = unsafe { *std::ptr::addr_of!(PREVIOUS) };
    match previous {
        Some(previous)
            if previous.sa_sigaction != libc::SIG_DFL && previous.sa_sigaction != libc::SIG_IGN =>
        {
            if previous.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: an `SA_SIGINFO` handler has this signature.
                let handler: extern "C" fn(i32, *mut libc::siginfo_t, *mut std::ffi::c_void) =
                    unsafe { std::mem::transmute(previous.sa_sigaction) };
                handler(signal, info, context);
            } else {
                // SAFETY: a plain handler has this signature.
                let handler: extern "C" fn(i32) =
                    unsafe { std::mem::transmute(previous.sa_sigaction) };
                handler(signal);
            }
        }
        _ => {
            // The default action: restored, then the faulting instruction runs again and faults for good.
            // SAFETY: resetting a signal's action to the default.
            unsafe {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_mapped_file_reads_as_its_bytes_and_is_not_damaged() {
        let mut file = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..100_000u32).map(|value| (value % 251) as u8).collect();
        file.write_all(&bytes).unwrap();
        let mapped = Mapped::new(&file, bytes.len() as u64).unwrap();
        assert_eq!(mapped.bytes(), &bytes[..]);
        assert!(!mapped.damaged());
        // An empty file is not mapped (a map of no bytes is an error), so it is read the ordinary way.
        assert!(Mapped::new(&tempfile::tempfile().unwrap(), 0).is_none());
    }

    #[test]
    fn a_file_cut_short_while_mapped_reads_as_zeros_past_its_end_and_says_so() {
        let page = rustix::param::page_size();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let bytes = vec![b'x'; page * 8];
        file.write_all(&bytes).unwrap();
        file.flush().unwrap();
        let mapped = Mapped::new(file.as_file(), bytes.len() as u64).unwrap();
        // Another handle truncates the file to two pages and a half: reading the pages after would raise SIGBUS.
        std::fs::OpenOptions::new()
            .write(true)
            .open(file.path())
            .unwrap()
            .set_len((page * 5 / 2) as u64)
            .unwrap();
        let read = mapped.bytes();
        assert_eq!(read[0], b'x');
        assert!(!mapped.damaged());
        // The page past the new end faults; the handler puts zeros over it and the rest of the map.
        assert_eq!(read[page * 4], 0);
        assert!(mapped.damaged());
        assert!(read[page * 4..].iter().all(|byte| *byte == 0));
        drop(mapped);
        // The slot is free again, and a new map of the (shorter) file is whole and undamaged.
        let again = Mapped::new(file.as_file(), (page * 5 / 2) as u64).unwrap();
        assert!(again.bytes().iter().all(|byte| *byte == b'x'));
        assert!(!again.damaged());
    }
}
