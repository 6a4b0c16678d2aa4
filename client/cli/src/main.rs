//! The `toolenv` binary: the command line ([`toolenv_cli::main`]) with the
//! allocator.
#![forbid(unsafe_code)]

/// Episodes, verdicts and wire messages are many small allocations.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    toolenv_cli::main()
}
