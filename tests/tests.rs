//! End-to-end tests: a real server on 127.0.0.1:0, real gRPC clients.

// Starting a server and a client; the requests, verdicts and reports the tests build and read.
mod support;

// Every task passes with the reference agent over gRPC, and fails inaction and random agents.
mod suite;
// Per domain, wrong plays that make each kind of oracle check fail.
mod oracle_failures;
// Malformed requests get the right status and details, and never hurt the server.
mod bad_inputs;
// Limits, expiry, finishing twice and graceful shutdown.
mod lifecycle;
// The same episode twice gives byte-identical trajectories.
mod determinism;
// Hundreds of concurrent episodes give the same verdicts as one by one.
mod concurrency;
// Injected faults as a tonic client sees them, determinism under concurrency, retries.
mod faults;
// Perturbed descriptions (ε): recorded, deterministic, meaning-preserving.
mod perturbations;
// The result-reading solver plays over gRPC as it does in-process.
mod solver;
// Grids of episodes (agents × ε × λ × trials) and their reports.
mod runs;
// Runs hosted as work queues: leases, expiry, aggregation, restarts.
mod hosted;
// The documented Python worker plays a hosted run.
mod python_worker;
// Health checks, server reflection and tool schemas for generic clients.
mod discovery;
// Prometheus metrics scraped over HTTP after real episodes, faults and a hosted run.
mod metrics;
// Two agents compared with paired tests over the tasks both played.
mod compare;
// Many calls over one CallTools stream, byte for byte as unary CallTool.
mod streaming;
// Fork and replay over gRPC; counterfactual attribution of a real run's failures.
mod attribution;
// Built-in LLM agents against a scripted OpenAI-compatible endpoint: protocols, retries, replays.
mod llm_agents;
// The LLM judge of prose answers against a scripted endpoint: its ruling decides, is recorded, replays.
mod answer_judge;
// The LLM user of conversational tasks against a scripted endpoint: honest, lying, replayed, failing.
mod llm_user;
// Multi-agent episodes: roles, the message bus, MAS-FIRE's fifteen fault types and their tables.
mod masfire;
// Two Python workers in two roles share the episodes of a hosted multi-agent run.
mod two_roles;
// Tasks of the user's own: built with TaskBuilder, served under file:<hash>, played, hosted.
mod taskfiles;
// Generated suites: listed, played by the built-in agents, answers judged, runs named by suite.
mod generated;
// Conversational tasks: the simulated user over gRPC, at any concurrency; the solver asks and passes.
mod conversation;
// Hostile inputs: limits on every field, brief errors, nonsense refused, capacity that frees, leases under slow calls.
mod hardening;
// A bearer token on every service but health, TLS from PEM files, real clients.
mod security;
// The text report, `report --json` and the HTML page agree on every number of a real run.
mod report_agreement;
// The fuzz harness's bounded run of every target, and its deterministic mutations.
mod fuzz;
// TLS with the README's certificate recipe and a plain self-signed certificate; clear errors.
mod tls;
// The PostgreSQL store (a real cluster from initdb): same reports as SQLite, copies, clear errors.
mod pg_store;
// Replicas on one PostgreSQL store: episodes move and continue byte for byte; a shared hosted run survives a replica.
mod replicas;
// Every source file has a header; inside a crate, imports flow one way.
mod tidy;
// Calls with the index they are to take: applied once however often they are sent.
mod exactly_once;
