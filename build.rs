//! Compiles `proto/` into Rust with the pure-Rust `protox` compiler, so no
//! system `protoc` is needed, and keeps the encoded descriptor set for
//! server reflection.

use std::path::PathBuf;

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/toolenv/v1/toolenv.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["proto"])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("toolenv_v1_descriptor.bin"), fds.encode_to_vec())?;
    // Generated maps iterate in a fixed order, so encodings are deterministic.
    tonic_prost_build::configure().btree_map(".").compile_fds(fds)?;
    Ok(())
}
