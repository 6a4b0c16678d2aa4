//! `toolenv chaos`: an MCP proxy in front of any MCP server, injecting the
//! chaos layer's faults into its tool calls.
//!
//! The proxy speaks MCP over stdio (newline-delimited JSON-RPC) to its client
//! and runs the upstream server as a child process over stdio. It works on
//! the JSON-RPC lines themselves, not on rmcp's typed model: every message no
//! fault hit — initialize, lists, prompts, resources, notifications, the
//! server's own requests and a fault-free `tools/call` and its reply —
//! passes through byte for byte, as read.
//!
//! Each `tools/call` gets the session's next call index; its fault is drawn
//! by [`SessionDraws`] (the built-in domains' ChaCha8 draws and fault kinds,
//! keyed by seed and session), so the same seed, session and calls meet the
//! same faults. Manifestations, MCP-native:
//!
//! - timeouts (after the timeout, scaled by `--time-scale`) and resets,
//!   cascade outages and lost replies: JSON-RPC errors (`-32001` request
//!   timed out, `-32000` unavailable) with the structured error in `data`;
//! - rate limits, suspensions and cascade overloads: tool results with
//!   `isError: true` and `{"error": {"code", "reason", "message",
//!   "retry_after_ms", "retry_after_virtual_ms"}}`, as `toolenv mcp` gives;
//! - empty (`{}`), late (a heavy-tailed delay), cut (a list halved or the
//!   text cut), stale (an earlier, different result of the same tool and
//!   arguments in the session) and drifted results ([`drift`]: from the
//!   drift on, every JSON result in the new shape).
//!
//! Persistent states (a suspension, a cascade's burst, a rate-limit window)
//! carry over as in the built-in domains; the rate-limit window is judged
//! on the session's virtual clock (real time divided by the time scale, or
//! at time scale 0 the waits a call declares in `_meta` `toolenv/waited_ms`).

mod connect;
pub mod drift;
mod http;
pub mod ledger;
mod reply;
mod stale;

pub use connect::{ConnectError, connect};
pub use http::serve_http;

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;
use toolenv_core::chaos::{Alteration, Cut, FaultKind, FaultProfile, Mode, Phase, SessionDraws, Stop};

use ledger::{Call, FaultRecord, OutcomeKind};
use reply::{Stopped, cascade, failure_reply, rate_limited, reset, rpc_error, suspended, timed_out};
use stale::Recent;

/// JSON-RPC error code of a request that timed out (as MCP SDKs use it).
pub const REQUEST_TIMEOUT: i64 = -32001;
/// JSON-RPC error code of a server that could not be reached.
pub const UNAVAILABLE: i64 = -32000;
/// JSON-RPC error code of a request that is not a valid one.
pub const INVALID_REQUEST: i64 = -32600;

/// How long, by default, the upstream server has to exit after the
/// client's input ended (and so its own stdin closed) before the proxy kills it.
pub const UPSTREAM_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// How to run the proxy.
#[derive(Debug, Clone)]
pub struct Config {
    /// The seed of the draws.
    pub seed: u64,
    /// The session's name: draws are keyed by (seed, session).
    pub session: String,
    /// The fault profile's name, for the ledger.
    pub profile_name: String,
    /// The fault profile.
    pub profile: FaultProfile,
    /// Real milliseconds per simulated one (0: never sleep).
    pub time_scale: f64,
    /// Where to write the ledger (JSON lines), if anywhere.
    pub ledger: Option<PathBuf>,
    /// The upstream server's command and arguments.
    pub command: Vec<String>,
    /// Drift the tool list itself: parameters renamed by the drift rules
    /// (snake_case to camelCase) in every `tools/list` reply, and a call's
    /// arguments renamed back before they go upstream.
    pub drift_tools: bool,
    /// How long the upstream server has to exit on its own once the
    /// client's input ended, before it is killed ([`UPSTREAM_GRACE`] by default).
    pub grace: std::time::Duration,
}

/// Why the proxy stopped.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The profile is invalid.
    #[error("invalid fault profile: {0}")]
    Profile(#[from] toolenv_core::chaos::ProfileError),
    /// No upstream command.
    #[error("no upstream command: give it after `--`")]
    NoCommand,
    /// The upstream server could not be started.
    #[error("cannot start the upstream server `{0}`: {1}")]
    Spawn(String, std::io::Error),
    /// The ledger file could not be created.
    #[error("cannot write the ledger {0}: {1}")]
    Ledger(PathBuf, std::io::Error),
    /// Reading or writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The session's fault state and bookkeeping.
struct State {
    draws: SessionDraws,
    time_scale: f64,
    session: String,
    seed: u64,
    profile_name: String,
    started: Instant,
    next_index: u32,
    clock_ms: u64,
    suspended: bool,
    cascade_left: u32,
    limited_until_ms: u64,
    drifted: bool,
    /// Calls sent upstream, by the JSON text of their id.
    pending: HashMap<String, Pending>,
    /// The latest upstream results by (tool, arguments).
    history: HashMap<(String, String), Recent>,
    /// Whether the tool list drifts ([`Config::drift_tools`]).
    drift_tools: bool,
    /// `tools/list` requests waiting for their reply, by the JSON text of their id.
    listing: std::collections::HashSet<String>,
    /// Per tool, the drifted parameter names the client sees, to the upstream's.
    renamed: HashMap<String, drift::Renamed>,
    ledger: Option<std::fs::File>,
}

/// A call forwarded upstream, waiting for its reply.
struct Pending {
    call: Call,
    drawn: Option<FaultKind>,
}

type Shared = Arc<Mutex<State>>;

/// Runs the proxy between a client's `input`/`output` and the upstream
/// command, until the upstream server's output ends (it exits, or ends once
/// the client closed its input). Returns the upstream's exit status.
pub async fn run<R, W>(config: Config, input: R, output: W) -> Result<std::process::ExitStatus, ProxyError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let chaos = toolenv_core::chaos::Chaos::new(config.profile.clone())?;
    let (program, args) = config.command.split_first().ok_or(ProxyError::NoCommand)?;
    let ledger = match &config.ledger {
        Some(path) => Some(std::fs::File::create(path).map_err(|e| ProxyError::Ledger(path.clone(), e))?),
        None => None,
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| ProxyError::Spawn(program.clone(), e))?;
    let mut upstream_in = child.stdin.take().ok_or_else(|| std::io::Error::other("no upstream stdin"))?;
    let upstream_out = child.stdout.take().ok_or_else(|| std::io::Error::other("no upstream stdout"))?;
    let state: Shared = Arc::new(Mutex::new(State {
        draws: SessionDraws::new(chaos, config.seed, &config.session),
        time_scale: config.time_scale,
        session: config.session.clone(),
        seed: config.seed,
        profile_name: config.profile_name.clone(),
        started: Instant::now(),
        next_index: 0,
        clock_ms: 0,
        suspended: false,
        cascade_left: 0,
        limited_until_ms: 0,
        drifted: false,
        pending: HashMap::new(),
        history: HashMap::new(),
        drift_tools: config.drift_tools,
        listing: std::collections::HashSet::new(),
        renamed: HashMap::new(),
        ledger,
    }));

    // Lines to the client, written and flushed one by one.
    let (to_client, mut client_lines) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = client_lines.recv().await {
            // One write per line: the line and its newline together.
            line.push('\n');
            output.write_all(line.as_bytes()).await?;
            output.flush().await?;
        }
        Ok::<_, std::io::Error>(())
    });
    // Lines to the upstream server.
    let (to_upstream, mut upstream_lines) = mpsc::unbounded_channel::<String>();
    let upstream_writer = tokio::spawn(async move {
        while let Some(mut line) = upstream_lines.recv().await {
            line.push('\n');
            upstream_in.write_all(line.as_bytes()).await?;
            upstream_in.flush().await?;
        }
        // Closing its stdin asks the upstream server to finish.
        drop(upstream_in);
        Ok::<_, std::io::Error>(())
    });

    // Sent (or dropped) when the client's input ends.
    let (client_gone, gone) = tokio::sync::oneshot::channel::<()>();
    let reader = {
        let (state, to_client) = (state.clone(), to_client.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(input).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                from_client(&state, line, &to_client, &to_upstream);
            }
            let _ = client_gone.send(());
        })
    };

    // Once the client is gone (and the server's stdin closed with it), the
    // server has the grace period to end on its own, as MCP's stdio shutdown
    // asks, before it is killed: a proxy never outlives its client for long.
    let killed = async {
        let _ = gone.await;
        tokio::time::sleep(config.grace).await;
    };
    tokio::pin!(killed);
    let mut lines = BufReader::new(upstream_out).lines();
    loop {
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => from_upstream(&state, line, &to_client),
                _ => break,
            },
            () = &mut killed => {
                let _ = child.start_kill();
                break;
            }
        }
    }
    reader.abort();
    // Calls the upstream server never answered, in call order.
    let mut orphans: Vec<Pending> = state.lock().map(|mut s| s.pending.drain().map(|(_, p)| p).collect()).unwrap_or_default();
    orphans.sort_by_key(|pending| pending.call.index);
    for pending in orphans {
        let id: Value = serde_json::from_str(&id_text(&pending.call)).unwrap_or(Value::Null);
        let reply = rpc_error(&id, UNAVAILABLE, "the upstream server closed", None);
        let mut call = pending.call;
        call.outcome = OutcomeKind::Invalid;
        finish(&state, call, reply, 0, &to_client);
    }
    drop(to_client);
    let _ = upstream_writer.await;
    let _ = writer.await;
    Ok(child.wait().await?)
}

/// The id a forwarded call's reply carries (kept in the call's reply field until it comes).
fn id_text(call: &Call) -> String {
    call.reply.clone()
}

/// A line from the client: a `tools/call` meets the chaos layer, anything else passes through.
fn from_client(state: &Shared, line: String, to_client: &mpsc::UnboundedSender<String>, to_upstream: &mpsc::UnboundedSender<String>) {
    let Ok(Value::Object(message)) = serde_json::from_str::<Value>(&line) else {
        let _ = to_upstream.send(line);
        return;
    };
    let (Some(id), Some("tools/call")) = (message.get("id"), message.get("method").and_then(Value::as_str)) else {
        if let (Some(id), Some("tools/list")) = (message.get("id"), message.get("method").and_then(Value::as_str))
            && let Ok(mut s) = state.lock()
            && s.drift_tools
        {
            s.listing.insert(id.to_string());
        }
        let _ = to_upstream.send(line);
        return;
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let tool_name = params["name"].as_str().unwrap_or_default().to_owned();
    let arguments_json = params.get("arguments").map_or_else(|| "{}".to_owned(), Value::to_string);
    let waited_ms = params["_meta"]["toolenv/waited_ms"].as_u64().unwrap_or(0);
    let Ok(mut s) = state.lock() else { return };
    if s.pending.contains_key(&id.to_string()) {
        // JSON-RPC ids of requests in flight are unique: a second call with
        // the id of one still waiting for its reply could not be told apart
        // from it, so it is refused, and is no call of the session.
        let _ = to_client.send(rpc_error(id, INVALID_REQUEST, "a request with this id is still waiting for its reply", None));
        return;
    }
    let index = s.next_index;
    s.next_index += 1;
    s.clock_ms = if s.time_scale > 0.0 {
        (s.started.elapsed().as_secs_f64() * 1000.0 / s.time_scale) as u64
    } else {
        s.clock_ms.saturating_add(waited_ms)
    };
    let mut call = Call {
        session: s.session.clone(),
        seed: s.seed,
        fault_profile: s.profile_name.clone(),
        index,
        tool_name,
        arguments_json,
        outcome: OutcomeKind::Result,
        failure: None,
        fault: None,
        drawn_without_effect: String::new(),
        delay_ms: 0,
        waited_ms,
        forwarded: false,
        reply: String::new(),
    };
    let params_ = s.draws.profile().params.clone();
    let carried = |kind: FaultKind| FaultRecord { kind, new: false, recoverable: kind.recoverable() };
    let stopped: Option<(FaultRecord, Stopped)> = if s.suspended {
        Some((carried(FaultKind::HardRateLimit), suspended()))
    } else if s.cascade_left > 0 {
        s.cascade_left -= 1;
        Some((carried(FaultKind::CascadingFailure), cascade(&s, index)))
    } else if s.clock_ms < s.limited_until_ms {
        let left = s.limited_until_ms - s.clock_ms;
        Some((carried(FaultKind::SoftRateLimit), rate_limited(left, "retried before the retry delay passed")))
    } else {
        match s.draws.fault(index) {
            Some(kind) => match kind.phase() {
                Phase::Stops(stop) => {
                    let answer = match stop {
                        Stop::Timeout => {
                            call.delay_ms = params_.timeout_ms;
                            timed_out(params_.timeout_ms)
                        }
                        Stop::Reset => reset(),
                        Stop::RateLimit => {
                            s.limited_until_ms = s.clock_ms.saturating_add(params_.retry_after_ms);
                            rate_limited(params_.retry_after_ms, "rate limit exceeded")
                        }
                        Stop::Suspension => {
                            s.suspended = true;
                            suspended()
                        }
                        Stop::Cascade => {
                            s.cascade_left = params_.cascade_calls;
                            cascade(&s, index)
                        }
                        Stop::Empty => Stopped::Empty,
                    };
                    Some((FaultRecord { kind, new: true, recoverable: kind.recoverable() }, answer))
                }
                _ => {
                    forward(&mut s, call, id, Some(kind), line, to_upstream);
                    return;
                }
            },
            None => {
                forward(&mut s, call, id, None, line, to_upstream);
                return;
            }
        }
    };
    let scale = s.time_scale;
    drop(s);
    let Some((fault, answer)) = stopped else { return };
    call.fault = Some(fault);
    let reply = match answer {
        Stopped::Empty => {
            call.outcome = OutcomeKind::Result;
            reply::empty_result(id)
        }
        Stopped::Failure(failure, as_rpc) => {
            let reply = failure_reply(id, &failure, as_rpc, scale);
            call.outcome = OutcomeKind::Failure;
            call.failure = Some(failure);
            reply
        }
    };
    let delay = call.delay_ms;
    finish(state, call, reply, delay, to_client);
}

/// Sends a call upstream, to be answered when its reply comes.
fn forward(s: &mut State, mut call: Call, id: &Value, drawn: Option<FaultKind>, line: String, to_upstream: &mpsc::UnboundedSender<String>) {
    call.forwarded = true;
    call.reply = id.to_string();
    let line = match s.renamed.get(&call.tool_name) {
        Some(names) => drift::undrifted_call(&line, names).unwrap_or(line),
        None => line,
    };
    s.pending.insert(id.to_string(), Pending { call, drawn });
    let _ = to_upstream.send(line);
}

/// A line from the upstream server: the reply to a forwarded call meets
/// its fault, anything else passes through.
fn from_upstream(state: &Shared, line: String, to_client: &mpsc::UnboundedSender<String>) {
    let Ok(Value::Object(mut message)) = serde_json::from_str::<Value>(&line) else {
        let _ = to_client.send(line);
        return;
    };
    let key = match (message.get("id"), message.contains_key("method")) {
        (Some(id), false) => id.to_string(),
        _ => {
            let _ = to_client.send(line);
            return;
        }
    };
    let Ok(mut s) = state.lock() else { return };
    if s.listing.remove(&key) {
        let line = match drift::drifted_tools(&Value::Object(message)) {
            Some((drifted, maps)) => {
                s.renamed.extend(maps);
                drifted.to_string()
            }
            None => line,
        };
        drop(s);
        let _ = to_client.send(line);
        return;
    }
    let Some(Pending { mut call, drawn }) = s.pending.remove(&key) else {
        drop(s);
        let _ = to_client.send(line);
        return;
    };
    let history_key = (call.tool_name.clone(), call.arguments_json.clone());
    let Some(result) = message.get("result").cloned() else {
        // A JSON-RPC error of the upstream server: no fault alters it.
        drop(s);
        call.outcome = OutcomeKind::Invalid;
        call.drawn_without_effect = drawn.map(|k| k.name().to_owned()).unwrap_or_default();
        finish(state, call, line, 0, to_client);
        return;
    };
    if result["isError"] == Value::Bool(true) {
        // The tool's own error reaches the client as it is: a draw has no effect.
        drop(s);
        call.outcome = OutcomeKind::Error;
        call.drawn_without_effect = drawn.map(|k| k.name().to_owned()).unwrap_or_default();
        finish(state, call, line, 0, to_client);
        return;
    }
    let stale = s.history.entry(history_key).or_default().stale_then_record(&result);
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let mut took_effect = false;
    let mut delay = 0;
    let mut altered: Option<Value> = None;
    match drawn.map(FaultKind::phase) {
        Some(Phase::OlderState) => {
            if let Some(old) = stale {
                altered = Some(old);
                took_effect = true;
            }
        }
        Some(Phase::SwitchesMode(Mode::SchemaV2)) => {
            if !s.drifted && drift::shaped(&result) != result {
                s.drifted = true;
                took_effect = true;
            }
        }
        Some(Phase::AltersReply(Alteration::Delay)) => {
            delay = s.draws.latency_ms(call.index);
            took_effect = delay > 0;
        }
        Some(Phase::AltersReply(Alteration::Cut)) => {
            let whole = if s.drifted { drift::shaped(&result) } else { result.clone() };
            if let Some(cut) = cut_result(&s.draws, call.index, &whole, &mut call.outcome) {
                altered = Some(cut);
                took_effect = true;
            }
        }
        Some(Phase::AltersReply(Alteration::LoseReply)) => {
            let failure = if s.draws.variant(call.index, 2) == 0 {
                delay = s.draws.profile().params.timeout_ms;
                timed_out(delay)
            } else {
                reset()
            };
            let Stopped::Failure(failure, as_rpc) = failure else { unreachable!("a lost reply is a failure") };
            let reply = failure_reply(&id, &failure, as_rpc, s.time_scale);
            call.outcome = OutcomeKind::Failure;
            call.failure = Some(failure);
            call.fault = Some(FaultRecord { kind: FaultKind::AmbiguousCommit, new: true, recoverable: true });
            call.delay_ms = delay;
            drop(s);
            finish(state, call, reply, delay, to_client);
            return;
        }
        Some(Phase::Stops(_)) | None => {}
    }
    if let Some(kind) = drawn {
        if took_effect {
            call.fault = Some(FaultRecord { kind, new: true, recoverable: kind.recoverable() });
        } else {
            call.drawn_without_effect = kind.name().to_owned();
        }
    }
    call.delay_ms = delay;
    // A reply no fault altered, before any drift, passes through as read.
    let reply = match altered {
        None if !s.drifted => line,
        None => {
            message.insert("result".into(), drift::shaped(&result));
            Value::Object(message).to_string()
        }
        Some(value) => {
            // A stale result comes in the current shape; a cut one was shaped before it was cut.
            let value = if s.drifted && call.outcome == OutcomeKind::Result && drawn != Some(FaultKind::PartialResponse) {
                drift::shaped(&value)
            } else {
                value
            };
            message.insert("result".into(), value);
            Value::Object(message).to_string()
        }
    };
    drop(s);
    finish(state, call, reply, delay, to_client);
}

/// Sends a reply to the client after `delay_ms` simulated milliseconds
/// (scaled), and writes the call's ledger line as it goes.
fn finish(state: &Shared, mut call: Call, reply: String, delay_ms: u64, to_client: &mpsc::UnboundedSender<String>) {
    call.reply = reply;
    let scale = state.lock().map(|s| s.time_scale).unwrap_or(0.0);
    let real = Duration::from_secs_f64(delay_ms as f64 * scale / 1000.0);
    let (state, to_client) = (state.clone(), to_client.clone());
    // The ledger line goes first: a client that sends its next call on this
    // reply finds this call's line written, so a sequential client's ledger
    // is in call order.
    let deliver = move || {
        if let Ok(mut s) = state.lock()
            && let Some(file) = s.ledger.as_mut()
        {
            let line = serde_json::to_string(&call).unwrap_or_default();
            if let Err(error) = writeln!(file, "{line}") {
                eprintln!("toolenv chaos: writing the ledger: {error}");
            }
        }
        let _ = to_client.send(call.reply);
    };
    if real.is_zero() {
        deliver();
    } else {
        tokio::spawn(async move {
            tokio::time::sleep(real).await;
            deliver();
        });
    }
}

/// A result with its first text content cut as a partial response cuts it;
/// `None` when there is nothing to cut. Structured content is cut alike, or
/// dropped when the text no longer parses.
fn cut_result(draws: &SessionDraws, index: u32, result: &Value, outcome: &mut OutcomeKind) -> Option<Value> {
    let mut result = result.clone();
    let items = result.get_mut("content")?.as_array_mut()?;
    let item = items.iter_mut().find(|item| item["type"] == "text")?;
    let text = item["text"].as_str()?;
    let cut = draws.cut(index, text)?;
    let (text, parsed) = match cut {
        Cut::Json(text) => {
            let parsed = serde_json::from_str::<Value>(&text).ok();
            (text, parsed)
        }
        Cut::Raw(text) => {
            *outcome = OutcomeKind::Raw;
            (text, None)
        }
    };
    item["text"] = Value::String(text);
    if let Some(object) = result.as_object_mut()
        && object.contains_key("structuredContent")
    {
        match parsed {
            Some(value) => {
                object.insert("structuredContent".into(), value);
            }
            None => {
                object.remove("structuredContent");
            }
        }
    }
    Some(result)
}
