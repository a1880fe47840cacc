//! `floor`: a plain `Vec` index with no synchronisation — the physical limit of a lookup.
//!
//! The table is filled before it is shared and never changes afterwards, so several threads
//! may index it without any synchronisation (an `Arc` of an immutable vector). It cannot
//! allocate or close; it exists for the lookup workloads.

use super::{BenchFile, Table};
use std::sync::Arc;

/// The floor.
pub struct Floor;

impl Table for Floor {
    const NAME: &'static str = "floor";
    type Handle = Arc<Vec<Option<Box<BenchFile>>>>;

    fn new_table() -> Self::Handle {
        Arc::new(Vec::new())
    }
    fn share(h: &mut Self::Handle) -> Self::Handle {
        h.clone()
    }
    fn open(h: &mut Self::Handle, file: BenchFile) -> u32 {
        let v = Arc::get_mut(h).expect("the floor is filled before it is shared");
        let fd = v.iter().position(Option::is_none).unwrap_or(v.len());
        if fd == v.len() {
            v.push(None);
        }
        v[fd] = Some(Box::new(file));
        fd as u32
    }
    #[inline(always)]
    fn lookup(h: &Self::Handle, fd: u32) -> Option<u64> {
        h.get(fd as usize)?.as_ref().map(|f| f.id)
    }
}
