//! Compiles the echo baseline's proto with the pure-Rust `protox`, exactly
//! as the workspace root compiles `toolenv.v1`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/bench/v1/echo.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["proto"])?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
