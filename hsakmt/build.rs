//! The shared library's identity: soname `libhsakmt.so.1` and every
//! `hsaKmt*` export in version node `HSAKMT_1` (`hsakmt.map`), what ROCR
//! 5.2.3's imports name (`hsaKmtOpenKFD@HSAKMT_1`, ...).

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rerun-if-changed=hsakmt.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsakmt.so.1");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/hsakmt.map");
}
