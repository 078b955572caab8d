//! Links the wasm32 app with its relocations kept, which `cargo xtask build-web` reads to split the views into
//! chunks of their own (`xtask/src/web/split.rs`). A link argument of this crate alone, so no dependency is
//! compiled differently and a RUSTFLAGS variable in the environment does not drop it.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|arch| arch == "wasm32") {
        println!("cargo:rustc-link-arg=--emit-relocs");
    }
}
