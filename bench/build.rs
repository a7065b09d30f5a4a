//! Compiles the C floor the submit path is measured against.
fn main() {
    println!("cargo:rerun-if-changed=src/floor.c");
    cc::Build::new()
        .file("src/floor.c")
        .opt_level(2)
        .compile("barebell_floor");
}
