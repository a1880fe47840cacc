//! `include/fdtable.h` is generated from this crate by cbindgen; this test regenerates it and
//! fails if the committed header differs. `FDTABLE_BLESS=1` rewrites the header instead.

use std::path::PathBuf;

#[test]
fn header_is_in_sync() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let header = crate_dir.join("../../include/fdtable.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("reading cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");

    if std::env::var_os("FDTABLE_BLESS").is_some_and(|v| v != "0") {
        std::fs::write(&header, &generated).expect("writing include/fdtable.h");
        return;
    }
    let current = std::fs::read_to_string(&header).unwrap_or_default();
    if current != generated {
        let first = current
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| current.lines().count().min(generated.lines().count()));
        panic!(
            "include/fdtable.h is out of date (first difference at line {}); regenerate it with \
             `FDTABLE_BLESS=1 cargo test -p fdtable-capi --test header`",
            first + 1
        );
    }
}
