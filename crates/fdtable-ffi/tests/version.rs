//! The C library's version has one source: this package's version (which names the SONAME,
//! build.rs) must be the header's `FDT_VERSION_*` (fdtable-capi's constants).

use fdtable_capi::{FDT_VERSION_MAJOR, FDT_VERSION_MINOR, FDT_VERSION_PATCH, fdt_version};

#[test]
fn the_headers_version_is_this_packages() {
    let v = [
        FDT_VERSION_MAJOR.to_string(),
        FDT_VERSION_MINOR.to_string(),
        FDT_VERSION_PATCH.to_string(),
    ];
    assert_eq!(
        v,
        [
            env!("CARGO_PKG_VERSION_MAJOR"),
            env!("CARGO_PKG_VERSION_MINOR"),
            env!("CARGO_PKG_VERSION_PATCH"),
        ],
        "crates/fdtable-ffi/Cargo.toml's version and fdtable-capi's FDT_VERSION_* differ"
    );
    assert_eq!(
        fdt_version(),
        (FDT_VERSION_MAJOR << 16) | (FDT_VERSION_MINOR << 8) | FDT_VERSION_PATCH
    );
}
