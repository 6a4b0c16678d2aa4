//! MAS-FIRE's fifteen fault types for multi-agent systems (the MAS-FIRE
//! paper, §3.1–3.2 and Fig. 1), injected at the environment's boundary.
//!
//! MAS-FIRE injects faults into a multi-agent system by three mechanisms:
//! *prompt modification* (system prompts and the user's task), *interception
//! and response rewriting* (at the boundary where agents call tools or talk
//! to peers) and *message routing manipulation*. toolenv sits at exactly
//! those boundaries for a team of agents playing one episode: it serves the
//! role prompts and the task description, it answers every tool call, and it
//! carries every message on the episode's bus. So each fault is injected
//! there, deterministically, and recorded as ground truth in the trajectory
//! (a call's `mas_fault`, or the trajectory's `prompt_faults`).
//!
//! Where the paper delegates a mutation to an LLM (semantic mutations:
//! hallucination, information loss, parameter filling, inexecutable plans,
//! instruction conflicts and ambiguity), toolenv applies a rule driven by the
//! task's slots and the result's own values ([`rewrite`]): another price, a
//! date a day off, a swapped id, a record removed, a slot withheld.
//!
//! Every decision is a pure function of (episode, event index, purpose): one
//! ChaCha8 draw at a fixed position, as the chaos layer does, on a key of its
//! own so that MAS faults never shift a λ fault's draw.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::codec::chacha::chacha8_block;

pub mod rewrite;

/// Parts per million: the unit of the injection rate.
const PPM: u64 = 1_000_000;

crate::named_enum! {
    /// One of MAS-FIRE's fifteen injectable fault types (its Fig. 1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum MasFault {
        /// Configuration fault: a role's system prompt merges another role's definition.
        RoleAmbiguity = "role-ambiguity",
        /// Configuration fault: a role's system prompt orders it to accept another role's messages unverified.
        BlindTrust = "blind-trust",
        /// Instruction fault: the task gains a constraint incompatible with it.
        InstructionLogicConflict = "instruction-logic-conflict",
        /// Instruction fault: a concrete slot of the task is replaced by vague words.
        InstructionAmbiguity = "instruction-ambiguity",
        /// Reasoning fault: a tool result carries a plausible but wrong value.
        Hallucination = "hallucination",
        /// Planning/memory fault: an essential record or field is removed from a tool result.
        CriticalInformationLoss = "critical-information-loss",
        /// Planning fault: a plan sent over the bus names a tool that does not exist.
        InexecutablePlan = "inexecutable-plan",
        /// Action fault: a call is routed to a similar but wrong tool.
        ToolSelectionError = "tool-selection-error",
        /// Action fault: an argument is altered before execution, type-correct.
        ParameterFillingError = "parameter-filling-error",
        /// Action fault: the call's arguments are corrupted into an invalid invocation.
        ParameterFormatError = "parameter-format-error",
        /// Memory fault: early messages are pruned from an inbox or pool read.
        MemoryLoss = "memory-loss",
        /// Memory fault: a reply is inflated far beyond a normal context budget.
        ContextLengthViolation = "context-length-violation",
        /// Communication fault: a message is returned to its sender instead of its recipient.
        MessageCycle = "message-cycle",
        /// Communication fault: one message is delivered many times.
        MessageStorm = "message-storm",
        /// Communication fault: a directed message is also delivered to every unrelated agent.
        BroadcastAmplification = "broadcast-amplification",
    }
}

/// Where in an episode a fault type is injected: MAS-FIRE's three mechanisms,
/// with the event toolenv injects it at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InjectionPoint {
    /// Prompt modification of a role's system prompt, when an agent joins.
    Join,
    /// Prompt modification of the task description, when the episode is created.
    Description,
    /// Rewriting of a tool call's request, before it runs.
    Request,
    /// Rewriting of a tool call's reply, after it ran.
    Reply,
    /// Rewriting or re-routing of a message, when it is sent.
    Send,
    /// Pruning of what an inbox or pool read returns.
    Read,
}

impl MasFault {
    /// Where the fault type is injected.
    pub const fn point(self) -> InjectionPoint {
        use MasFault::*;
        match self {
            RoleAmbiguity | BlindTrust => InjectionPoint::Join,
            InstructionLogicConflict | InstructionAmbiguity => InjectionPoint::Description,
            ToolSelectionError | ParameterFillingError | ParameterFormatError => InjectionPoint::Request,
            Hallucination | CriticalInformationLoss | ContextLengthViolation => InjectionPoint::Reply,
            InexecutablePlan | MessageCycle | MessageStorm | BroadcastAmplification => InjectionPoint::Send,
            MemoryLoss => InjectionPoint::Read,
        }
    }

    /// MAS-FIRE's mechanism for the fault type (§3.2).
    pub const fn mechanism(self) -> &'static str {
        match self.point() {
            InjectionPoint::Join | InjectionPoint::Description => "prompt modification",
            InjectionPoint::Request | InjectionPoint::Reply | InjectionPoint::Read => "response rewriting",
            InjectionPoint::Send => match self {
                MasFault::InexecutablePlan => "response rewriting",
                _ => "message routing",
            },
        }
    }

    /// Whether the fault rewrites a tool call's request or reply: the
    /// faults on which closed loops are expected to beat linear pipelines.
    pub const fn rewrites_calls(self) -> bool {
        matches!(self.point(), InjectionPoint::Request | InjectionPoint::Reply)
    }
}

impl std::fmt::Display for MasFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl Serialize for MasFault {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for MasFault {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        MasFault::parse(&name).ok_or_else(|| serde::de::Error::custom(MasProfileError::UnknownFault(name).to_string()))
    }
}

/// Default copies of a stormed message.
pub const DEFAULT_STORM_COPIES: u32 = 5;
/// Default bytes of bulk a context-length violation adds.
pub const DEFAULT_BULK_BYTES: u32 = 64 * 1024;
/// Most copies of a stormed message.
pub const MAX_STORM_COPIES: u32 = 100;
/// Most bytes of bulk a context-length violation may add.
pub const MAX_BULK_BYTES: u32 = 1024 * 1024;
/// What a MAS-FIRE profile's label starts with.
pub const LABEL_PREFIX: &str = "mas:";
/// The rate of the `mas-fire` grid's profiles.
pub const PRESET_RATE: f64 = 0.3;
/// The roles the `mas-fire` grid's profiles target: the agents doing the
/// work, as MAS-FIRE injects into agents' outputs, never into a checker.
/// A single agent (no role) is always targeted.
pub const WORKER_ROLES: [&str; 2] = ["planner", "executor"];
/// Most roles an episode may declare, and most names a profile may target.
pub const MAX_ROLES: usize = 16;

/// A MAS-FIRE fault profile: which fault types, at which rate, on which roles.
///
/// Prompt faults (role ambiguity, blind trust, instruction conflict and
/// ambiguity) are injected at their one injection point whenever listed: the
/// prompt is corrupted or it is not. Every other listed type competes for
/// each eligible event (a tool call, a message sent, an inbox read) of an
/// agent in a targeted role: the event draws a fault with probability
/// `rate`, then one of the listed types injectable there, uniformly. A
/// drawn fault that cannot act on its event (a hallucination on a write, a
/// plan rewrite of a message without a plan) changes nothing and is not
/// recorded: the ledger holds only faults that took effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MasProfile {
    /// The fault types, in name order, without repeats.
    pub faults: Vec<MasFault>,
    /// Probability that an eligible event meets one of the listed event faults, in [0, 1].
    pub rate: f64,
    /// The roles whose agents' events and prompts are targeted; empty: every agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Copies a message storm delivers.
    #[serde(default = "default_storm_copies")]
    pub storm_copies: u32,
    /// Bytes of bulk a context-length violation adds to a reply.
    #[serde(default = "default_bulk_bytes")]
    pub bulk_bytes: u32,
}

fn default_storm_copies() -> u32 {
    DEFAULT_STORM_COPIES
}

fn default_bulk_bytes() -> u32 {
    DEFAULT_BULK_BYTES
}

/// Why a MAS-FIRE profile was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MasProfileError {
    /// An unknown fault type name.
    #[error("unknown MAS-FIRE fault type '{name}'; known types: {known}", name = .0, known = MasFault::ALL.map(MasFault::name).join(", "))]
    UnknownFault(String),
    /// The rate is outside [0, 1] or not a number.
    #[error("rate must be within [0, 1], got {0}")]
    Rate(f64),
    /// A parameter is out of range.
    #[error("{field}: {message}")]
    Param {
        /// The parameter.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
}

impl MasProfile {
    /// A profile of the named fault types at `rate`, on every agent, with default parameters.
    pub fn new(names: &[impl AsRef<str>], rate: f64) -> Result<Self, MasProfileError> {
        let mut faults = Vec::new();
        for name in names {
            let name = name.as_ref().trim();
            faults.push(MasFault::parse(name).ok_or_else(|| MasProfileError::UnknownFault(name.to_owned()))?);
        }
        let profile = Self::of(faults, rate);
        profile.validate()?;
        Ok(profile)
    }

    /// A profile of the given fault types (sorted, without repeats) at `rate`.
    pub fn of(mut faults: Vec<MasFault>, rate: f64) -> Self {
        faults.sort();
        faults.dedup();
        Self { faults, rate, roles: Vec::new(), storm_copies: DEFAULT_STORM_COPIES, bulk_bytes: DEFAULT_BULK_BYTES }
    }

    /// Checks the rate, the role names and the parameters.
    pub fn validate(&self) -> Result<(), MasProfileError> {
        if !(0.0..=1.0).contains(&self.rate) {
            return Err(MasProfileError::Rate(self.rate));
        }
        let param = |field, message: String| Err(MasProfileError::Param { field, message });
        if self.roles.len() > MAX_ROLES {
            return param("roles", format!("at most {MAX_ROLES} roles"));
        }
        if let Some(role) = self.roles.iter().find(|r| !valid_name(r)) {
            return param("roles", format!("'{role}' is not a role name (1–64 letters, digits, '-', '_')"));
        }
        if !(1..=MAX_STORM_COPIES).contains(&self.storm_copies) {
            return param("storm_copies", format!("must be within 1..={MAX_STORM_COPIES}, got {}", self.storm_copies));
        }
        if !(1..=MAX_BULK_BYTES).contains(&self.bulk_bytes) {
            return param("bulk_bytes", format!("must be within 1..={MAX_BULK_BYTES}, got {}", self.bulk_bytes));
        }
        Ok(())
    }

    /// Whether the profile lists `fault`.
    pub fn has(&self, fault: MasFault) -> bool {
        self.faults.contains(&fault)
    }

    /// Whether the profile targets an agent of `role` (`None`: an agent
    /// without a role, a single agent, which is always the whole system).
    pub fn targets(&self, role: Option<&str>) -> bool {
        self.roles.is_empty() || role.is_none_or(|r| self.roles.iter().any(|t| t == r))
    }

    /// The profile's label, which [`MasProfile::from_label`] reads back:
    /// `mas:` + fault names joined by `+` + `@rate` + `:` roles joined by
    /// `+` when it targets some, e.g. `mas:hallucination@0.3:planner+executor`.
    pub fn label(&self) -> String {
        let names: Vec<&str> = self.faults.iter().map(|f| f.name()).collect();
        let mut label = format!("{LABEL_PREFIX}{}@{}", names.join("+"), self.rate);
        if !self.roles.is_empty() {
            label = format!("{label}:{}", self.roles.join("+"));
        }
        label
    }

    /// Reads a label as [`MasProfile::label`] writes it; the rate may be
    /// left out (1) and so may the roles (every agent). `None` when the text
    /// does not start with `mas:`.
    pub fn from_label(label: &str) -> Option<Result<Self, MasProfileError>> {
        let rest = label.strip_prefix(LABEL_PREFIX)?;
        let (spec, roles) = rest.split_once(':').unwrap_or((rest, ""));
        let (names, rate) = spec.split_once('@').unwrap_or((spec, "1"));
        let Ok(rate) = rate.parse::<f64>() else {
            return Some(Err(MasProfileError::Param { field: "rate", message: format!("'{rate}' is not a number") }));
        };
        let names: Vec<&str> = names.split('+').collect();
        Some(MasProfile::new(&names, rate).and_then(|mut profile| {
            profile.roles = roles.split('+').filter(|r| !r.is_empty()).map(str::to_owned).collect();
            profile.validate().map(|()| profile)
        }))
    }

    /// The profiles of the `mas-fire` grid: each fault type alone, at
    /// [`PRESET_RATE`], on the agents doing the work ([`WORKER_ROLES`]).
    pub fn presets() -> Vec<MasProfile> {
        MasFault::ALL
            .into_iter()
            .map(|f| MasProfile { roles: WORKER_ROLES.map(str::to_owned).to_vec(), ..MasProfile::of(vec![f], PRESET_RATE) })
            .collect()
    }

    /// Decides whether the event at `index` (a call index) at `point` meets
    /// one of the profile's fault types, and which.
    pub(crate) fn draw(&self, dice: &MasDice, index: u32, point: InjectionPoint) -> Option<MasFault> {
        let eligible: Vec<MasFault> = self.faults.iter().copied().filter(|f| f.point() == point).collect();
        if eligible.is_empty() || self.rate <= 0.0 {
            return None;
        }
        let threshold = (self.rate * PPM as f64).round() as u64;
        if dice.below(index, point_purpose(point), PPM) >= threshold {
            return None;
        }
        Some(eligible[dice.below(index, Purpose::Which, eligible.len() as u64) as usize])
    }
}

/// A role, agent or tool name: 1–64 ASCII letters, digits, `-` or `_`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What a MAS draw is for: each purpose its own ChaCha8 stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Purpose {
    /// Whether a request is rewritten.
    Request = 1,
    /// Whether a reply is rewritten.
    Reply = 2,
    /// Whether a sent message is rewritten or re-routed.
    Send = 3,
    /// Whether a read is pruned.
    Read = 4,
    /// Which of the eligible fault types.
    Which = 5,
    /// Where in its target a mutation acts (which value, record, field).
    Where = 6,
    /// A prompt fault's choice (which other role, which slot).
    Prompt = 7,
}

fn point_purpose(point: InjectionPoint) -> Purpose {
    match point {
        InjectionPoint::Request => Purpose::Request,
        InjectionPoint::Reply => Purpose::Reply,
        InjectionPoint::Send => Purpose::Send,
        InjectionPoint::Read => Purpose::Read,
        InjectionPoint::Join | InjectionPoint::Description => Purpose::Prompt,
    }
}

/// The deterministic source of an episode's MAS-FIRE draws.
#[derive(Debug, Clone)]
pub(crate) struct MasDice {
    key: [u8; 32],
}

impl MasDice {
    /// Dice for one episode, keyed by what identifies it (apart from the chaos layer's).
    pub(crate) fn new(task_id: &str, seed: u64, trial: u32) -> Self {
        let mut hash = Sha256::new();
        hash.update(b"toolenv.masfire.v1\0");
        hash.update(task_id.as_bytes());
        hash.update([0]);
        hash.update(seed.to_le_bytes());
        hash.update(trial.to_le_bytes());
        Self { key: hash.finalize().into() }
    }

    /// The draw for (event index, purpose): a uniform u64.
    pub(crate) fn draw(&self, index: u32, purpose: Purpose) -> u64 {
        let word = u64::from(index) * 2;
        let block = chacha8_block(&self.key, word / 16, purpose as u64);
        let i = (word % 16) as usize;
        u64::from(block[i]) | (u64::from(block[i + 1]) << 32)
    }

    /// A draw in [0, n).
    pub(crate) fn below(&self, index: u32, purpose: Purpose, n: u64) -> u64 {
        self.draw(index, purpose) % n.max(1)
    }
}

/// What one injected MAS-FIRE fault did: the ledger's ground truth, from
/// which the judging rules of `toolenv_domains::masfire::judge` decides detection and repair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Injection {
    /// The agent's role prompt also carries `merged_role`'s definition.
    RoleAmbiguity {
        /// The agent.
        agent: String,
        /// Its declared role.
        role: String,
        /// The role whose definition was merged in.
        merged_role: String,
    },
    /// The agent's role prompt orders it to trust `trusted_role` unverified.
    BlindTrust {
        /// The agent.
        agent: String,
        /// Its declared role.
        role: String,
        /// The role it is told to trust.
        trusted_role: String,
    },
    /// The description gained a constraint incompatible with the task.
    InstructionLogicConflict {
        /// The slot the constraint contradicts.
        slot: String,
        /// The sentence added.
        constraint: String,
    },
    /// A slot's value in the description was replaced by vague words.
    InstructionAmbiguity {
        /// The slot withheld.
        slot: String,
        /// Its value, which the simulated user gives when asked.
        withheld: String,
        /// The words put in its place.
        vague: String,
    },
    /// A value of a read's result was replaced by a plausible wrong one.
    Hallucination {
        /// Where, as a JSON pointer into the result.
        pointer: String,
        /// The true value.
        original: Value,
        /// The value the agent got.
        replaced: Value,
    },
    /// A record or field of a read's result was removed.
    CriticalInformationLoss {
        /// Where it was, as a JSON pointer into the result.
        pointer: String,
        /// What was removed.
        removed: Value,
    },
    /// A plan in a message names a tool that does not exist.
    InexecutablePlan {
        /// The message's sequence number.
        message: u32,
        /// The tool the plan named.
        original_tool: String,
        /// The tool it names now.
        bogus_tool: String,
    },
    /// The call ran another tool than the one called.
    ToolSelectionError {
        /// The tool called.
        intended: String,
        /// The tool that ran.
        routed: String,
    },
    /// An argument was altered before the call ran.
    ParameterFillingError {
        /// The canonical arguments as sent.
        intended_arguments: String,
        /// The argument altered.
        field: String,
        /// Its value as sent.
        original: Value,
        /// The value the tool got.
        replaced: Value,
    },
    /// The arguments were corrupted into an invalid invocation.
    ParameterFormatError {
        /// The arguments as sent (canonical).
        intended_arguments: String,
        /// The text the tool got.
        corrupted: String,
    },
    /// Messages were left out of an inbox or pool read.
    MemoryLoss {
        /// The delivery sequence numbers left out.
        pruned: Vec<u32>,
    },
    /// A reply was inflated with bulk ahead of its content.
    ContextLengthViolation {
        /// Bytes of the true reply.
        original_bytes: u64,
        /// Bytes added.
        added_bytes: u64,
    },
    /// A message went back to its sender instead of its recipient.
    MessageCycle {
        /// The message's sequence number.
        message: u32,
        /// The recipient it was meant for.
        intended_to: String,
    },
    /// A message was delivered `copies` times.
    MessageStorm {
        /// The message's sequence number.
        message: u32,
        /// Deliveries made.
        copies: u32,
    },
    /// A directed message was also delivered to agents it was not meant for.
    BroadcastAmplification {
        /// The message's sequence number.
        message: u32,
        /// The agents who got it too.
        extra_recipients: Vec<String>,
    },
}

impl Injection {
    /// The fault type.
    pub fn fault(&self) -> MasFault {
        match self {
            Injection::RoleAmbiguity { .. } => MasFault::RoleAmbiguity,
            Injection::BlindTrust { .. } => MasFault::BlindTrust,
            Injection::InstructionLogicConflict { .. } => MasFault::InstructionLogicConflict,
            Injection::InstructionAmbiguity { .. } => MasFault::InstructionAmbiguity,
            Injection::Hallucination { .. } => MasFault::Hallucination,
            Injection::CriticalInformationLoss { .. } => MasFault::CriticalInformationLoss,
            Injection::InexecutablePlan { .. } => MasFault::InexecutablePlan,
            Injection::ToolSelectionError { .. } => MasFault::ToolSelectionError,
            Injection::ParameterFillingError { .. } => MasFault::ParameterFillingError,
            Injection::ParameterFormatError { .. } => MasFault::ParameterFormatError,
            Injection::MemoryLoss { .. } => MasFault::MemoryLoss,
            Injection::ContextLengthViolation { .. } => MasFault::ContextLengthViolation,
            Injection::MessageCycle { .. } => MasFault::MessageCycle,
            Injection::MessageStorm { .. } => MasFault::MessageStorm,
            Injection::BroadcastAmplification { .. } => MasFault::BroadcastAmplification,
        }
    }
}

/// What became of one injected MAS-FIRE fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasOutcome {
    /// The fault type.
    pub fault: MasFault,
    /// The call it met (`None` for a fault in the description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
    /// The agent it met, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// That agent's role, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The team took a corrective action (MAS-FIRE's "trigger").
    pub detected: bool,
    /// The corrective action undid the local error ("fixed").
    pub fixed: bool,
}
