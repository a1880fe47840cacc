//! Links `libfdtable.so` as a distribution ships it: the SONAME `libfdtable.so.MAJOR` (MAJOR
//! of this package's version, which is the C library's, `FDT_VERSION_MAJOR`), and the version
//! script that exports only `fdt_*` symbols. Both are ELF linker options: they are left out
//! for Apple and Windows targets.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=fdtable.map");
    let vendor = env::var("CARGO_CFG_TARGET_VENDOR").unwrap_or_default();
    let family = env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    if vendor == "apple" || !family.split(',').any(|f| f == "unix") {
        return;
    }
    let major = env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets the package version");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libfdtable.so.{major}");
    let dir = env::var("CARGO_MANIFEST_DIR").expect("cargo sets the manifest directory");
    let map = Path::new(&dir).join("fdtable.map");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
}
