//! The server child process the gRPC and scale phases measure: a toolenv
//! server and the raw tonic echo baseline in one process (`toolenv-bench
//! serve`), so that their CPU time and resident memory are their own; and
//! the client side's channels and runtime.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use tonic::transport::{Channel, Endpoint};
use toolenv_bench::grpc_case;

use crate::Error;

/// `toolenv-bench serve [MAX_EPISODES]`: a toolenv server (time scale 0) and
/// the echo baseline on 127.0.0.1:0; prints `READY <toolenv> <echo>` and
/// serves until its standard input closes (or 30 minutes pass).
pub(crate) fn serve(args: &[String]) -> Result<(), Error> {
    let max_episodes = args.first().map(|a| a.parse()).transpose()?.unwrap_or(toolenv_server::Config::default().max_episodes);
    if let Some(mib) = warm_mib()? {
        warm(mib);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let config = toolenv_server::Config { time_scale: 0.0, max_episodes, ..Default::default() };
        let server = toolenv_server::RunningServer::start(config).await?;

        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await?;
        let echo_addr = listener.local_addr()?;
        let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let echo = toolenv_bench::EchoService { result_json: grpc_case().result_text() };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let echo_task = tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(toolenv_bench::pb::echo_server::EchoServer::new(echo))
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                }),
        );
        println!("READY {} {}", server.addr(), echo_addr);
        std::io::stdout().flush()?;
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
        });
        tokio::select! {
            _ = stdin_closed => {}
            _ = tokio::time::sleep(Duration::from_secs(30 * 60)) => {}
        }
        let _ = stop.send(());
        let _ = echo_task.await;
        server.shutdown().await?;
        Ok::<(), Error>(())
    })?;
    // The blocking stdin reader may still be parked; do not wait for it.
    std::process::exit(0)
}

/// `TOOLENV_BENCH_WARM_MIB`: memory the server child touches before it
/// serves, a diagnostic. Memory a process gets for the first time is zeroed
/// by the kernel, and on some VMs also backed by the host on that first
/// touch, which can cost more than the call that touched it. A toolenv
/// server keeps part of every call for its episode's trajectory, so its
/// resident memory grows with every call while the echo's does not.
pub(crate) fn warm_mib() -> Result<Option<usize>, Error> {
    let Some(text) = std::env::var_os(WARM_MIB) else { return Ok(None) };
    let mib = text.to_str().and_then(|t| t.parse().ok()).ok_or_else(|| format!("{WARM_MIB}={text:?}: not a number of MiB"))?;
    Ok(Some(mib))
}

const WARM_MIB: &str = "TOOLENV_BENCH_WARM_MIB";

/// Touches `mib` MiB in blocks of the sizes a call keeps (its texts and a
/// share of its episode's record list), then frees them: with mimalloc's
/// purging off (see [`Servers::start`]) the pages stay with the process,
/// and the server's growth reuses them.
fn warm(mib: usize) {
    const SIZES: [usize; 4] = [64, 256, 4 * 1024, 32 * 1024];
    let each = mib * 1024 * 1024 / SIZES.len();
    let blocks: Vec<Vec<u8>> = SIZES.iter().flat_map(|&size| (0..each / size).map(move |i| vec![i as u8 | 1; size])).collect();
    std::hint::black_box(&blocks);
}

/// A running `toolenv-bench serve` child.
pub(crate) struct Servers {
    child: Child,
    stdin: Option<ChildStdin>,
    pub(crate) toolenv_url: String,
    pub(crate) echo_url: String,
}

impl Servers {
    pub(crate) fn start(max_episodes: Option<usize>) -> Result<Self, Error> {
        // TOOLENV_BENCH_SERVER_PREFIX runs the child under a tool, e.g.
        // "valgrind --tool=callgrind" (for `load` with a profiler).
        let prefix = std::env::var("TOOLENV_BENCH_SERVER_PREFIX").unwrap_or_default();
        let mut words = prefix.split_whitespace();
        let mut command = match words.next() {
            Some(program) => {
                let mut command = Command::new(program);
                command.args(words).arg(std::env::current_exe()?);
                command
            }
            None => Command::new(std::env::current_exe()?),
        };
        command.arg("serve");
        if warm_mib()?.is_some() {
            // Freed pages stay with the child for its growth to reuse.
            command.env("MIMALLOC_PURGE_DELAY", "-1");
        }
        if let Some(n) = max_episodes {
            command.arg(n.to_string());
        }
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut line)?;
        let mut parts = line.split_whitespace().skip(1);
        let (Some(toolenv), Some(echo)) = (parts.next(), parts.next()) else {
            let _ = child.kill();
            return Err(format!("server child said {line:?}").into());
        };
        Ok(Self { toolenv_url: format!("http://{toolenv}"), echo_url: format!("http://{echo}"), child, stdin })
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn rss(&self) -> u64 {
        toolenv_bench::proc::rss_bytes(self.pid()).unwrap_or(0)
    }

    pub(crate) fn cpu(&self) -> f64 {
        toolenv_bench::proc::cpu_seconds(self.pid()).unwrap_or(0.0)
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        // Closing stdin stops the child; kill it (by its own handle) if it lingers.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) async fn channel(url: &str) -> Result<Channel, Error> {
    Ok(Endpoint::from_shared(url.to_owned())?.tcp_nodelay(true).connect_timeout(Duration::from_secs(10)).connect().await?)
}

pub(crate) fn client_runtime() -> Result<tokio::runtime::Runtime, Error> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}
