//! A stand-in kernel image for `x86_64-unknown-none`: the parts a real kernel supplies — an
//! entry point, a `#[global_allocator]`, a panic handler — around the library, so that the
//! final link proves every symbol the core needs is defined (the RCU hooks come from
//! `fdtable::set_rcu!` in the library). Not bootable: there is no boot protocol header, and
//! `_start` just runs a few syscalls and halts.
//!
//! ```sh
//! cargo +nightly build -Zbuild-std=core,alloc --target x86_64-unknown-none \
//!     --manifest-path examples/kernel/Cargo.toml --example image --features image
//! ```

#![no_std]
#![no_main]

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicUsize, Ordering};
use fdtable_example_kernel::{CLONE_FILES, Kernel, O_RDWR};

const HEAP_SIZE: usize = 1 << 20;

/// The kernel heap: a bump allocator over a static array (frees are ignored). A real kernel
/// plugs in its slab or buddy allocator here.
struct Bump {
    heap: UnsafeCell<[u8; HEAP_SIZE]>,
    next: AtomicUsize,
}

// SAFETY: `alloc` hands out disjoint ranges of `heap` (each reserved by a compare-and-swap on
// `next`), and the allocator itself never reads or writes the memory it hands out.
unsafe impl Sync for Bump {}

// SAFETY: every returned block lies inside `heap`, is aligned as `layout` asks and is handed
// out once (the compare-and-swap reserves it); null is returned when the heap is exhausted.
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let base = self.heap.get() as usize;
        // ORDERING: Relaxed; the counter only partitions the heap, it publishes nothing (the
        // memory handed out reaches other CPUs through whatever shares the pointer).
        let mut cur = self.next.load(Ordering::Relaxed);
        loop {
            let start = (base + cur).next_multiple_of(layout.align()) - base;
            let Some(end) = start.checked_add(layout.size()) else {
                return core::ptr::null_mut();
            };
            if end > HEAP_SIZE {
                return core::ptr::null_mut();
            }
            // ORDERING: Relaxed both; as above.
            match self
                .next
                .compare_exchange_weak(cur, end, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return (base + start) as *mut u8,
                Err(now) => cur = now,
            }
        }
    }

    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
}

#[global_allocator]
static HEAP: Bump = Bump {
    heap: UnsafeCell::new([0; HEAP_SIZE]),
    next: AtomicUsize::new(0),
};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    halt()
}

fn halt() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// The entry point: init writes to the console, forks, shares its table with a thread (so
/// lookups take the lock-free path through the RCU hooks), execs.
#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    let kernel = Kernel::new();
    let Ok(mut init) = kernel.spawn_init() else {
        halt()
    };
    let _ = init.write(1, b"hello from fdtable\n");
    if let Ok(child) = init.fork() {
        let _ = child.write(2, b"child\n");
    }
    if let Ok(thread) = init.clone_task(CLONE_FILES) {
        let _ = thread.write(1, b"thread\n");
        let _ = thread.open("/dev/null", O_RDWR);
    }
    let _ = init.execve();
    halt()
}
