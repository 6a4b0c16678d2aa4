//! The fault model: fault profiles λ and the deterministic decision of which
//! fault, if any, meets each tool call.
//!
//! A call's fault is a pure function of (episode key, call index, purpose):
//! one draw from ChaCha8 at a fixed position of a fixed stream, compared with
//! integer thresholds, so rates are exact and no other episode, thread or
//! arrival order can change a schedule. Persistent fault states (suspension,
//! schema drift, a cascade) are counted in calls; the soft rate limit's window
//! is counted in the episode's virtual milliseconds.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::codec::chacha::chacha8_block;

mod session;
pub use session::{Cut, SessionDraws};

/// Parts per million: the unit of every rate and weight threshold.
const PPM: u64 = 1_000_000;

crate::named_enum! {
    /// A kind of production fault.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    pub enum FaultKind {
        /// A delay, then DEADLINE_EXCEEDED; the tool did not run.
        TransientTimeout = "TransientTimeout",
        /// The correct result after a long, heavy-tailed delay.
        HighLatency = "HighLatency",
        /// OK with a valid but empty result.
        EmptyResponse = "EmptyResponse",
        /// UNAVAILABLE "connection reset by peer"; the tool did not run.
        ConnectionReset = "ConnectionReset",
        /// RESOURCE_EXHAUSTED with a retry delay; retries before it are rejected too.
        SoftRateLimit = "SoftRateLimit",
        /// PERMISSION_DENIED (consumer suspended) for the rest of the episode.
        HardRateLimit = "HardRateLimit",
        /// OK with the payload cut short.
        PartialResponse = "PartialResponse",
        /// From now on results come in the domain's v2 shape.
        SchemaDrift = "SchemaDrift",
        /// A read answered from an older snapshot of the state.
        StaleData = "StaleData",
        /// A correlated burst: this and the next calls fail.
        CascadingFailure = "CascadingFailure",
        /// A write applied whose reply is lost (timeout or reset): a blind retry
        /// applies it twice. Not in the paper's presets.
        AmbiguousCommit = "AmbiguousCommit",
    }
}

/// When a fault acts on the call it meets, and what it does there. Delivery
/// (in the episode) matches on this, so a kind whose action is new needs a
/// new variant here, and then an arm there, before anything compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The call is answered at once, and the state does not change (only an
    /// empty reply looks at a read's real result first).
    Stops(Stop),
    /// The call runs against the state before the most recent change (a
    /// write still runs against the current state).
    OlderState,
    /// The call runs, then its reply is altered.
    AltersReply(Alteration),
    /// The call runs, then a persistent mode switches on that reshapes its
    /// reply and every later one.
    SwitchesMode(Mode),
}

/// How a fault that stops a call answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// DEADLINE_EXCEEDED after the timeout.
    Timeout,
    /// UNAVAILABLE at once.
    Reset,
    /// RESOURCE_EXHAUSTED, opening a window (in virtual time) in which every call is refused.
    RateLimit,
    /// PERMISSION_DENIED, for this and every later call of the episode.
    Suspension,
    /// UNAVAILABLE or RESOURCE_EXHAUSTED, for this and a burst of later calls.
    Cascade,
    /// An OK reply with an empty result (a read whose real result is empty
    /// already gets that result: the fault had no effect).
    Empty,
}

/// How a fault alters the reply of a call that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alteration {
    /// The whole reply, after a heavy-tailed delay.
    Delay,
    /// The reply cut short.
    Cut,
    /// No reply: a timeout or a reset, though the call took effect.
    LoseReply,
}

/// A persistent mode a fault switches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Results come in the domain's v2 shape.
    SchemaV2,
}

/// How a fault kind acts: declared once per kind, in [`FaultKind::behaviour`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behaviour {
    /// When and how it acts on the call it meets.
    pub phase: Phase,
    /// Whether a later call (a retry, or a check of the state) can still get
    /// the right outcome.
    pub recoverable: bool,
}

impl FaultKind {
    /// How the kind acts and whether it can be recovered from: the one
    /// table that says so, a line per kind.
    pub const fn behaviour(self) -> Behaviour {
        use Phase::*;
        let (phase, recoverable) = match self {
            FaultKind::TransientTimeout => (Stops(Stop::Timeout), true),
            FaultKind::HighLatency => (AltersReply(Alteration::Delay), true),
            FaultKind::EmptyResponse => (Stops(Stop::Empty), true),
            FaultKind::ConnectionReset => (Stops(Stop::Reset), true),
            FaultKind::SoftRateLimit => (Stops(Stop::RateLimit), true),
            // Suspended for the rest of the episode.
            FaultKind::HardRateLimit => (Stops(Stop::Suspension), false),
            FaultKind::PartialResponse => (AltersReply(Alteration::Cut), true),
            // Every later result keeps the v2 shape.
            FaultKind::SchemaDrift => (SwitchesMode(Mode::SchemaV2), false),
            // The agent cannot tell an old answer from a current one.
            FaultKind::StaleData => (OlderState, false),
            FaultKind::CascadingFailure => (Stops(Stop::Cascade), true),
            // The write took effect; a check of the state (or a keyed retry) finds it.
            FaultKind::AmbiguousCommit => (AltersReply(Alteration::LoseReply), true),
        };
        Behaviour { phase, recoverable }
    }

    /// When and how the kind acts on the call it meets.
    pub const fn phase(self) -> Phase {
        self.behaviour().phase
    }

    /// Whether a later call (a retry, or a check of the state) can still get
    /// the right outcome: false for a suspension, a schema change and stale reads.
    pub const fn recoverable(self) -> bool {
        self.behaviour().recoverable
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// The knobs of the fault types, in simulated milliseconds and calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultParams {
    /// How long a timeout (and a lost reply) makes the caller wait.
    pub timeout_ms: u64,
    /// Shortest high-latency delay; delays follow a Pareto tail from here.
    pub latency_min_ms: u64,
    /// Longest high-latency delay.
    pub latency_max_ms: u64,
    /// Pareto shape of high-latency delays, in hundredths (150 = 1.5): smaller is heavier.
    pub latency_shape_centi: u32,
    /// How long a soft rate limit asks the caller to wait.
    pub retry_after_ms: u64,
    /// How many calls after the first a cascading failure also fails.
    pub cascade_calls: u32,
}

impl Default for FaultParams {
    fn default() -> Self {
        Self {
            timeout_ms: 5_000,
            latency_min_ms: 2_000,
            latency_max_ms: 30_000,
            latency_shape_centi: 150,
            retry_after_ms: 1_000,
            cascade_calls: 3,
        }
    }
}

/// A fault profile Λ: a failure rate and weights over fault kinds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultProfile {
    /// Probability that a call meets a fault, in [0, 1].
    pub failure_rate: f64,
    /// Share of each fault kind among faults; sums to 1.
    #[serde(default)]
    pub fault_weights: BTreeMap<FaultKind, f64>,
    /// The fault types' parameters.
    #[serde(default)]
    pub params: FaultParams,
}

/// Why a fault profile was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    /// The failure rate is outside [0, 1] or not a number.
    #[error("failure_rate must be within [0, 1], got {0}")]
    Rate(f64),
    /// A weight is negative or not a number.
    #[error("weight of {kind} must be a non-negative number, got {weight}")]
    Weight { kind: FaultKind, weight: f64 },
    /// The weights do not sum to 1.
    #[error("fault_weights must sum to 1, got {0}")]
    WeightSum(f64),
    /// A fault rate without any fault kind to draw.
    #[error("a non-zero failure_rate needs fault_weights")]
    NoWeights,
    /// An unknown fault kind name.
    #[error("unknown fault type '{name}'; known types: {known}", name = .0, known = FaultKind::ALL.map(FaultKind::name).join(", "))]
    UnknownKind(String),
    /// An unknown preset or profile name.
    #[error("unknown fault profile '{name}'; presets: {known}", name = .0, known = PRESETS.join(", "))]
    UnknownProfile(String),
    /// An ablation keeps none of the profile's fault kinds.
    #[error("restricting to [{0}] leaves none of the profile's fault types")]
    EmptyAblation(String),
    /// A parameter is out of range.
    #[error("params.{field}: {message}")]
    Param { field: &'static str, message: String },
}

/// The names [`FaultProfile::preset`] knows.
pub const PRESETS: [&str; 8] = ["0.0", "0.1", "0.2", "0.3", "timeout-only", "rate-limit-only", "partial-response-only", "mixed"];

impl FaultProfile {
    /// No faults at all (λ = 0).
    pub fn none() -> Self {
        Self { failure_rate: 0.0, fault_weights: BTreeMap::new(), params: FaultParams::default() }
    }

    /// A preset: the paper's Appendix B profiles by λ (`0.0`, `0.1`, `0.2`,
    /// `0.3`, also written `lambda-0.2`) and its ablations at λ = 0.2
    /// (`timeout-only`, `rate-limit-only`, `partial-response-only`, `mixed`).
    pub fn preset(name: &str) -> Result<Self, ProfileError> {
        use FaultKind::*;
        let weights = |pairs: &[(FaultKind, f64)]| pairs.iter().copied().collect::<BTreeMap<_, _>>();
        let medium =
            weights(&[(TransientTimeout, 0.25), (SoftRateLimit, 0.25), (PartialResponse, 0.2), (SchemaDrift, 0.15), (StaleData, 0.15)]);
        let (failure_rate, fault_weights) = match name.strip_prefix("lambda-").unwrap_or(name) {
            "0" | "0.0" => (0.0, BTreeMap::new()),
            "0.1" => (0.075, weights(&[(TransientTimeout, 0.4), (HighLatency, 0.3), (EmptyResponse, 0.3)])),
            "0.2" | "mixed" => (0.175, medium),
            "0.3" => (
                0.275,
                weights(&[
                    (TransientTimeout, 0.15),
                    (ConnectionReset, 0.15),
                    (HardRateLimit, 0.15),
                    (PartialResponse, 0.15),
                    (SchemaDrift, 0.2),
                    (CascadingFailure, 0.2),
                ]),
            ),
            "timeout-only" => (0.175, weights(&[(TransientTimeout, 1.0)])),
            "rate-limit-only" => (0.175, weights(&[(SoftRateLimit, 1.0)])),
            "partial-response-only" => (0.175, weights(&[(PartialResponse, 1.0)])),
            _ => return Err(ProfileError::UnknownProfile(name.to_owned())),
        };
        Ok(Self { failure_rate, fault_weights, params: FaultParams::default() })
    }

    /// Builds a custom profile from a rate and weights by fault name.
    pub fn custom(failure_rate: f64, weights: &BTreeMap<String, f64>, params: FaultParams) -> Result<Self, ProfileError> {
        let mut fault_weights = BTreeMap::new();
        for (name, &weight) in weights {
            let kind = FaultKind::parse(name).ok_or_else(|| ProfileError::UnknownKind(name.clone()))?;
            fault_weights.insert(kind, weight);
        }
        let profile = Self { failure_rate, fault_weights, params };
        profile.validate()?;
        Ok(profile)
    }

    /// Keeps only the given fault kinds, renormalizing their weights and
    /// keeping the failure rate: the paper's single-fault ablations.
    pub fn restricted_to(mut self, kinds: &[FaultKind]) -> Result<Self, ProfileError> {
        self.fault_weights.retain(|k, w| kinds.contains(k) && *w > 0.0);
        let total: f64 = self.fault_weights.values().sum();
        if total <= 0.0 && self.failure_rate > 0.0 {
            return Err(ProfileError::EmptyAblation(kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")));
        }
        self.fault_weights.values_mut().for_each(|w| *w /= total);
        Ok(self)
    }

    /// Checks the rate, the weights and the parameters.
    pub fn validate(&self) -> Result<(), ProfileError> {
        if !(0.0..=1.0).contains(&self.failure_rate) {
            return Err(ProfileError::Rate(self.failure_rate));
        }
        for (&kind, &weight) in &self.fault_weights {
            if !(weight >= 0.0 && weight.is_finite()) {
                return Err(ProfileError::Weight { kind, weight });
            }
        }
        let sum: f64 = self.fault_weights.values().sum();
        if self.failure_rate > 0.0 && self.fault_weights.is_empty() {
            return Err(ProfileError::NoWeights);
        }
        if !self.fault_weights.is_empty() && (sum - 1.0).abs() > 1e-6 {
            return Err(ProfileError::WeightSum(sum));
        }
        let p = &self.params;
        let param = |field, message: &str| Err(ProfileError::Param { field, message: message.to_owned() });
        if p.latency_min_ms > p.latency_max_ms {
            return param("latency_min_ms", "must not exceed latency_max_ms");
        }
        if p.latency_shape_centi == 0 {
            return param("latency_shape_centi", "must be positive");
        }
        for (field, value) in [("timeout_ms", p.timeout_ms), ("latency_max_ms", p.latency_max_ms), ("retry_after_ms", p.retry_after_ms)] {
            if value > 3_600_000 {
                return param(field, "must be at most one hour");
            }
        }
        if p.cascade_calls > 1_000 {
            return param("cascade_calls", "must be at most 1000");
        }
        Ok(())
    }

    /// The integer thresholds of one draw in [0, 1 000 000): a draw below
    /// `thresholds[i]` (and not below the previous one) is fault `i`; a draw
    /// at or above the last threshold is no fault. The thresholds add up to
    /// the failure rate exactly, to the millionth.
    fn thresholds(&self) -> Vec<(FaultKind, u64)> {
        let rate_ppm = (self.failure_rate * PPM as f64).round() as u64;
        let mut cumulative = 0.0;
        self.fault_weights
            .iter()
            .filter(|&(_, &w)| w > 0.0)
            .map(|(&kind, &w)| {
                cumulative += w;
                (kind, ((rate_ppm as f64) * cumulative.min(1.0)).round() as u64)
            })
            .collect()
    }
}

/// What a draw is for: each purpose reads its own ChaCha8 stream, so adding a
/// new kind of draw never shifts the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Purpose {
    /// Whether a call meets a fault, and which.
    Fault = 1,
    /// A high-latency delay.
    Latency = 2,
    /// Where a partial response is cut, and whether it is marked.
    Partial = 3,
    /// Which status a cascade's call gets; how an ambiguous commit's reply is lost.
    Variant = 4,
}

/// The deterministic source of an episode's fault draws.
#[derive(Debug, Clone)]
pub(crate) struct Dice {
    key: [u8; 32],
}

impl Dice {
    /// Dice for one episode, keyed by what identifies it.
    pub(crate) fn new(task_id: &str, seed: u64, trial: u32) -> Self {
        let mut hash = Sha256::new();
        hash.update(b"toolenv.chaos.v1\0");
        hash.update(task_id.as_bytes());
        hash.update([0]);
        hash.update(seed.to_le_bytes());
        hash.update(trial.to_le_bytes());
        Self { key: hash.finalize().into() }
    }

    /// The draw for (call index, purpose): a uniform u64.
    ///
    /// It is the u64 a `ChaCha8Rng` keyed by the episode, on stream
    /// `purpose`, gives at word position `2 × call_index`; the block that
    /// holds it is computed alone, where the generator would compute four
    /// blocks to use two words of one (the tests compare the two).
    pub(crate) fn draw(&self, call_index: u32, purpose: Purpose) -> u64 {
        let word = u64::from(call_index) * 2;
        let block = chacha8_block(&self.key, word / 16, purpose as u64);
        // An even word of a 16-word block: the pair never crosses a block.
        let i = (word % 16) as usize;
        u64::from(block[i]) | (u64::from(block[i + 1]) << 32)
    }

    /// A draw in [0, n).
    pub(crate) fn below(&self, call_index: u32, purpose: Purpose, n: u64) -> u64 {
        // n is tiny next to 2^64, so modulo bias is below one in 10^12.
        self.draw(call_index, purpose) % n.max(1)
    }
}

/// Decides which fault, if any, a new draw gives for a call.
pub(crate) fn draw_fault(profile: &FaultProfile, thresholds: &[(FaultKind, u64)], dice: &Dice, call_index: u32) -> Option<FaultKind> {
    if profile.failure_rate <= 0.0 {
        return None;
    }
    let roll = dice.below(call_index, Purpose::Fault, PPM);
    thresholds.iter().find(|&&(_, t)| roll < t).map(|&(kind, _)| kind)
}

/// A fault profile ready to draw from: its thresholds computed once.
#[derive(Debug, Clone)]
pub struct Chaos {
    profile: FaultProfile,
    thresholds: Vec<(FaultKind, u64)>,
}

impl Chaos {
    /// Prepares a validated profile.
    pub fn new(profile: FaultProfile) -> Result<Self, ProfileError> {
        profile.validate()?;
        let thresholds = profile.thresholds();
        Ok(Self { profile, thresholds })
    }

    /// The profile.
    pub fn profile(&self) -> &FaultProfile {
        &self.profile
    }

    /// Whether the profile can ever draw `kind`.
    pub fn can_draw(&self, kind: FaultKind) -> bool {
        self.thresholds.iter().any(|&(k, _)| k == kind)
    }

    pub(crate) fn draw(&self, dice: &Dice, call_index: u32) -> Option<FaultKind> {
        draw_fault(&self.profile, &self.thresholds, dice, call_index)
    }

    /// A heavy-tailed high-latency delay: Pareto from `latency_min_ms`, capped.
    pub(crate) fn latency_ms(&self, dice: &Dice, call_index: u32) -> u64 {
        let p = &self.profile.params;
        // u in (0, 1], from 53 random bits.
        let u = ((dice.draw(call_index, Purpose::Latency) >> 11) + 1) as f64 / (1u64 << 53) as f64;
        let shape = f64::from(p.latency_shape_centi) / 100.0;
        let delay = p.latency_min_ms as f64 / u.powf(1.0 / shape);
        (delay.round() as u64).clamp(p.latency_min_ms, p.latency_max_ms)
    }
}

impl Default for Chaos {
    fn default() -> Self {
        Self { profile: FaultProfile::none(), thresholds: Vec::new() }
    }
}

#[cfg(test)]
mod tests;
