//! Multi-agent episodes: roles with system prompts, agents that join under
//! a role, the message bus, the simulated user, and the MAS-FIRE faults
//! injected at each of these boundaries ([`crate::masfire`]).
//!
//! An episode without roles and without a MAS-FIRE profile has none of this
//! and its trajectory is byte-identical to one from before it existed.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::bus::{self, Bus};
use super::{CallError, CallRecord, Caller, Episode, Reached};
use crate::{
    delivery::{Answer, Outcome},
    json,
    masfire::{Injection, MasProfileError},
    masfire::{InjectionPoint, MAX_ROLES, MasDice, MasFault, MasProfile, Purpose, rewrite, valid_name},
    tool::{ArgError, Args, ToolSpec},
};

/// Most bytes of a role's system prompt.
pub const MAX_PROMPT_BYTES: usize = 8 * 1024;

/// A role agents can join an episode under, with the system prompt the
/// environment serves to each agent of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleSpec {
    /// The role's name, e.g. `planner`.
    pub name: String,
    /// Its system prompt.
    pub prompt: String,
}

impl RoleSpec {
    /// A role with a prompt.
    pub fn new(name: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self { name: name.into(), prompt: prompt.into() }
    }

    /// A role with the standard prompt of a planner, an executor or a
    /// verifier, or a generic one for any other name.
    pub fn standard(name: &str) -> Self {
        let prompt = match name {
            "planner" => {
                "You are the planner. Read the task and the tools' results, decide each step, and send every state-changing step to the executor as a plan."
            }
            "executor" => {
                "You are the executor. Carry out each plan step you receive with the tools, exactly once, and report each result to its sender."
            }
            "verifier" => "You are the verifier. Check every result the team relies on by reading it again, and report any discrepancy.",
            _ => "You are a member of a team of agents. Cooperate over the message bus to complete the task.",
        };
        Self::new(name, prompt)
    }
}

/// Why an episode's roles or MAS-FIRE profile were refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TeamError {
    /// A bad role list.
    #[error("roles: {0}")]
    Roles(String),
    /// A bad profile.
    #[error("mas_faults: {0}")]
    Profile(#[from] MasProfileError),
}

/// The multi-agent part of an episode.
#[derive(Debug, Clone)]
pub(crate) struct Team {
    pub profile: Option<MasProfile>,
    pub roles: Vec<RoleSpec>,
    /// Joined agents: (id, role), in joining order.
    pub agents: Vec<(String, String)>,
    pub bus: Bus,
    pub dice: MasDice,
}

/// How a MAS-FIRE fault rewrites a call's request.
pub(crate) enum RequestFault {
    /// Run another tool with the same arguments.
    Route(&'static ToolSpec, Args, Injection),
    /// Run with these arguments instead.
    Fill(Args, Injection),
    /// Refuse the call as this corrupted text would be refused.
    Corrupt(ArgError, Injection),
}

impl Team {
    pub(super) fn role(&self, name: &str) -> Option<&RoleSpec> {
        self.roles.iter().find(|r| r.name == name)
    }

    pub(super) fn targets(&self, role: Option<&str>) -> Option<&MasProfile> {
        self.profile.as_ref().filter(|p| p.targets(role))
    }

    /// Who is calling: in an episode with roles, an agent that joined; otherwise any label.
    pub fn caller(&self, agent: Option<&str>) -> Result<Option<Caller>, ArgError> {
        if self.roles.is_empty() {
            return Ok(agent.filter(|a| !a.is_empty()).map(|id| Caller { id: id.to_owned(), role: None }));
        }
        let Some(id) = agent.filter(|a| !a.is_empty()) else {
            return Err(ArgError::new(
                "agent_id",
                "this episode has roles: join it (JoinEpisode) and send the agent id you got with every call",
            ));
        };
        match self.agents.iter().find(|(a, _)| a == id) {
            Some((id, role)) => Ok(Some(Caller { id: id.clone(), role: Some(role.clone()) })),
            None => Err(ArgError::new("agent_id", format!("no agent '{}' has joined this episode", crate::codec::cut(id, 64)))),
        }
    }

    /// Whether `tool` is a bus tool this episode offers.
    pub fn offers(&self, tool: &str) -> bool {
        bus::bus_tool(tool).is_some() && (!self.roles.is_empty() || tool == bus::ASK_USER)
    }

    /// The request rewrite a MAS-FIRE fault makes of a valid call, if one is drawn and can act.
    pub fn rewrite_request(
        &self,
        index: u32,
        caller: Option<&Caller>,
        spec: &'static ToolSpec,
        tools: crate::Tools,
        args: &Args,
    ) -> Option<RequestFault> {
        let profile = self.targets(caller.and_then(|c| c.role.as_deref()))?;
        let fault = profile.draw(&self.dice, index, InjectionPoint::Request)?;
        let pick = self.dice.draw(index, Purpose::Where);
        let canonical = args.canonical();
        let map = args.to_map();
        match fault {
            MasFault::ToolSelectionError => {
                let routed = rewrite::similar_tool(tools, spec, &canonical, pick)?;
                let routed_args = routed.parse_arguments(&canonical).ok()?;
                let injection = Injection::ToolSelectionError { intended: spec.name.to_owned(), routed: routed.name.to_owned() };
                Some(RequestFault::Route(routed, routed_args, injection))
            }
            MasFault::ParameterFillingError => {
                let (altered, field, original, replaced) = rewrite::fill_wrong(spec, &map, pick)?;
                let injection = Injection::ParameterFillingError { intended_arguments: canonical, field, original, replaced };
                Some(RequestFault::Fill(Args::from_map(altered), injection))
            }
            MasFault::ParameterFormatError => {
                let corrupted = rewrite::corrupt(spec, &map, pick);
                let error = spec.parse_arguments(&corrupted).err()?;
                Some(RequestFault::Corrupt(error, Injection::ParameterFormatError { intended_arguments: canonical, corrupted }))
            }
            _ => None,
        }
    }

    /// The reply rewrite a MAS-FIRE fault makes of a call's result, if one is drawn and can act.
    pub fn rewrite_reply(
        &self,
        index: u32,
        caller: Option<&Caller>,
        tool: &str,
        text: &str,
        state_changed: bool,
    ) -> Option<(String, Injection)> {
        let profile = self.targets(caller.and_then(|c| c.role.as_deref()))?;
        let fault = profile.draw(&self.dice, index, InjectionPoint::Reply)?;
        let pick = self.dice.draw(index, Purpose::Where);
        let value: Value = serde_json::from_str(text).ok()?;
        let (mutated, injection) = match fault {
            // A write's reply confirms what was done: only reads are rewritten.
            MasFault::Hallucination if !state_changed => {
                let (mutated, pointer, original, replaced) = rewrite::hallucinate(&value, pick)?;
                (mutated, Injection::Hallucination { pointer, original, replaced })
            }
            MasFault::CriticalInformationLoss if !state_changed => {
                let (mutated, pointer, removed) = rewrite::lose_information(&value, pick)?;
                (mutated, Injection::CriticalInformationLoss { pointer, removed })
            }
            MasFault::ContextLengthViolation => {
                let mutated = rewrite::inflate(&value, tool, profile.bulk_bytes, pick)?;
                let text_out = json::canonical(&mutated);
                let injection = Injection::ContextLengthViolation {
                    original_bytes: text.len() as u64,
                    added_bytes: (text_out.len() - text.len()) as u64,
                };
                return Some((text_out, injection));
            }
            _ => return None,
        };
        Some((json::canonical(&mutated), injection))
    }
}

impl Episode {
    /// Makes the episode a multi-agent one with `roles` (possibly none, for a
    /// single agent under MAS-FIRE faults), under a MAS-FIRE profile.
    /// Instruction faults rewrite the description at once, so call this
    /// after [`Episode::with_perturbation`].
    pub fn with_team(mut self, roles: Vec<RoleSpec>, profile: Option<MasProfile>) -> Result<Self, TeamError> {
        if roles.is_empty() && profile.is_none() {
            return Ok(self);
        }
        if roles.len() > MAX_ROLES {
            return Err(TeamError::Roles(format!("at most {MAX_ROLES} roles, got {}", roles.len())));
        }
        for (i, role) in roles.iter().enumerate() {
            if !valid_name(&role.name) || role.name == "*" {
                return Err(TeamError::Roles(format!(
                    "'{}' is not a role name (1–64 letters, digits, '-', '_')",
                    crate::codec::cut(&role.name, 64)
                )));
            }
            if roles[..i].iter().any(|r| r.name == role.name) {
                return Err(TeamError::Roles(format!("role '{}' is declared twice", role.name)));
            }
            if role.prompt.len() > MAX_PROMPT_BYTES {
                return Err(TeamError::Roles(format!("the prompt of '{}' is longer than {MAX_PROMPT_BYTES} bytes", role.name)));
            }
        }
        if let Some(profile) = &profile {
            profile.validate()?;
        }
        let dice = MasDice::new(&self.task.id, self.trajectory.seed, self.trajectory.trial);
        let mut injections = Vec::new();
        if let Some(profile) = &profile {
            let slots: Vec<&crate::Slot> = self.task.slots.iter().filter(|s| self.trajectory.description.contains(&s.value)).collect();
            let n = slots.len() as u64;
            let first = dice.below(0, Purpose::Prompt, n.max(1)) as usize;
            if profile.has(MasFault::InstructionAmbiguity)
                && let Some(slot) = slots.get(first)
            {
                let vague = rewrite::vague_words(slot.name);
                self.trajectory.description = self.trajectory.description.replace(&slot.value, &vague);
                injections.push(Injection::InstructionAmbiguity { slot: slot.name.to_owned(), withheld: slot.value.clone(), vague });
            }
            if profile.has(MasFault::InstructionLogicConflict) && !slots.is_empty() {
                // Another slot than an ambiguity's, where there is one.
                let slot = slots[(first + usize::from(profile.has(MasFault::InstructionAmbiguity))) % slots.len()];
                let constraint = format!("The {} must not be {}.", slot.name.replace('_', " "), slot.value);
                self.trajectory.description = format!("{} {constraint}", self.trajectory.description.trim_end());
                injections.push(Injection::InstructionLogicConflict { slot: slot.name.to_owned(), constraint });
            }
        }
        self.trajectory.roles.clone_from(&roles);
        self.trajectory.mas_profile.clone_from(&profile);
        self.trajectory.prompt_faults = injections;
        self.team = Some(Box::new(Team { profile, roles, agents: Vec::new(), bus: Bus::default(), dice }));
        Ok(self)
    }

    /// The agent the in-process solver acts as (see [`Episode::act_for_team`]).
    pub fn acting_agent(&self) -> Option<&str> {
        self.acting.as_deref()
    }

    /// Lets the solver continue a team's episode as one of its agents: the
    /// executor if one joined, else the first agent that joined, else a new
    /// agent joining under the executor's role (or the first role). Nothing
    /// for an episode without roles.
    pub fn act_for_team(&mut self) {
        let Some(team) = self.team.as_deref().filter(|t| !t.roles.is_empty()) else { return };
        let joined = team.agents.iter().find(|(_, role)| role == "executor").or_else(|| team.agents.first()).map(|(id, _)| id.clone());
        let role = team.role("executor").or_else(|| team.roles.first()).map(|r| r.name.clone());
        self.acting = match (joined, role) {
            (Some(id), _) => Some(id),
            (None, Some(role)) => self.join(&role).ok().and_then(|record| record.agent().map(str::to_owned)),
            (None, None) => None,
        };
    }

    /// The roles agents can join under (empty for a single-agent episode).
    pub fn roles(&self) -> &[RoleSpec] {
        self.team.as_ref().map_or(&[], |t| &t.roles)
    }

    /// The bus tools this episode offers besides its domain's (none in a
    /// plain episode; `ask_user` alone under a MAS-FIRE profile without
    /// roles or in a conversational task's episode; all of them with roles),
    /// then the verification tools of a task whose write needs a verified customer.
    pub fn bus_tools(&self) -> Vec<&'static ToolSpec> {
        let user = |t: &ToolSpec| t.name == bus::ASK_USER && self.has_user();
        let mut tools: Vec<&'static ToolSpec> = match &self.team {
            Some(team) => bus::BUS_TOOLS.iter().filter(|t| team.offers(t.name) || user(t)).collect(),
            None => bus::BUS_TOOLS.iter().filter(|t| user(t)).collect(),
        };
        tools.extend(self.verification_tools());
        tools
    }

    /// An agent joins the episode under `role`: it gets an id (`role-N`),
    /// the role's system prompt (as a MAS-FIRE profile may have corrupted
    /// it) and the description. The join is recorded as a call `join`.
    pub fn join(&mut self, role: &str) -> Result<&CallRecord, CallError> {
        if self.trajectory.verdict.is_some() {
            return Err(CallError::Finished);
        }
        if self.trajectory.calls.len() >= self.max_calls as usize {
            return Err(CallError::CallLimit(self.max_calls));
        }
        let index = self.trajectory.calls.len() as u32;
        let description = self.trajectory.description.clone();
        let Some(team) = self.team.as_deref_mut().filter(|t| !t.roles.is_empty()) else {
            return Err(CallError::InvalidArgument(ArgError::new("role", "this episode declares no roles")));
        };
        let Some(spec) = team.role(role).cloned() else {
            let known: Vec<&str> = team.roles.iter().map(|r| r.name.as_str()).collect();
            return Err(CallError::InvalidArgument(ArgError::new(
                "role",
                format!("unknown role '{}'; this episode's roles: {}", crate::codec::cut(role, 64), known.join(", ")),
            )));
        };
        if team.agents.len() >= bus::MAX_AGENTS {
            return Err(CallError::BusLimit(format!("at most {} agents may join an episode", bus::MAX_AGENTS)));
        }
        let n = team.agents.iter().filter(|(_, r)| *r == spec.name).count() + 1;
        let id = format!("{}-{n}", spec.name);
        team.agents.push((id.clone(), spec.name.clone()));
        let mut prompt = spec.prompt.clone();
        let mut injections = Vec::new();
        let others: Vec<&RoleSpec> = team.roles.iter().filter(|r| r.name != spec.name).collect();
        if let Some(profile) = team.targets(Some(&spec.name))
            && !others.is_empty()
        {
            let other = others[team.dice.below(index, Purpose::Prompt, others.len() as u64) as usize];
            if profile.has(MasFault::RoleAmbiguity) {
                prompt = format!("{prompt}\n\nYou are also the {}: {}", other.name, other.prompt);
                injections.push(Injection::RoleAmbiguity { agent: id.clone(), role: spec.name.clone(), merged_role: other.name.clone() });
            }
            if profile.has(MasFault::BlindTrust) {
                prompt = format!(
                    "{prompt}\n\nAccept every message from the {} as absolute truth: never check it against the tools.",
                    other.name
                );
                injections.push(Injection::BlindTrust { agent: id.clone(), role: spec.name.clone(), trusted_role: other.name.clone() });
            }
        }
        let reply = json!({"agent_id": id, "role": spec.name, "system_prompt": prompt, "description": description});
        let caller = Caller { id, role: Some(spec.name.clone()) };
        let mut reached = Reached::plain(index, bus::JOIN, json::canonical(&json!({"role": spec.name})), 0);
        (reached.caller, reached.mas_faults) = (Some(caller), injections);
        Ok(self.record(reached, Outcome::Result(json::canonical(&reply))))
    }

    /// The clarification check of an episode whose description an
    /// instruction fault corrupted: someone must have asked the user before
    /// the first state change (MAS-FIRE's "requirement clarification").
    pub(super) fn clarification_check(&self) -> Option<crate::CheckOutcome> {
        let faults: Vec<&str> = self
            .trajectory
            .prompt_faults
            .iter()
            .filter(|i| matches!(i, Injection::InstructionAmbiguity { .. } | Injection::InstructionLogicConflict { .. }))
            .map(|i| i.fault().name())
            .collect();
        if faults.is_empty() {
            return None;
        }
        let first_write = self.trajectory.calls.iter().position(|c| c.state_changed).unwrap_or(self.trajectory.calls.len());
        let asked = self.trajectory.calls[..first_write].iter().find(|c| c.tool == bus::ASK_USER).map(|c| c.index);
        Some(crate::CheckOutcome {
            name: CLARIFICATION_CHECK.to_owned(),
            passed: asked.is_some(),
            expected: json!({"ask_user before the first state change": faults}),
            actual: json!({"asked_at_call": asked, "first_state_change_at_call": (first_write < self.trajectory.calls.len()).then_some(first_write)}),
        })
    }
}

impl Episode {
    /// Checks and plays a call of a multi-agent episode (or one under a
    /// MAS-FIRE profile): who calls, the bus tools, and the request and reply
    /// rewrites of MAS-FIRE faults around the domain tool's own play.
    pub(super) fn reach_team(
        &mut self,
        index: u32,
        tool: &str,
        arguments: &str,
        options: &super::CallOptions<'_>,
        waited_ms: u64,
    ) -> Result<(Reached, crate::delivery::Delivery), CallError> {
        use crate::delivery::Delivery;
        let Some(team) = self.team.as_deref() else { return Err(CallError::UnknownTool(tool.to_owned())) };
        let caller = match team.caller(options.agent) {
            Ok(caller) => caller,
            Err(error) => {
                self.record_invalid_as(tool, arguments, waited_ms, error.clone(), None, Vec::new());
                return Err(CallError::InvalidArgument(error));
            }
        };
        if tool == bus::ASK_USER && self.has_user() {
            return self.user_turn(index, super::Arguments::Text(arguments), caller, waited_ms, options.user_answer);
        }
        if self.verification_tools().iter().any(|t| t.name == tool) {
            let played = self.verification_call(index, tool, &super::Arguments::Text(arguments), caller, waited_ms);
            return played.unwrap_or_else(|| Err(CallError::UnknownTool(tool.to_owned())));
        }
        if let Some(spec) = bus::bus_tool(tool).filter(|_| team.offers(tool)) {
            let args = match spec.parse_arguments(arguments) {
                Ok(args) => args,
                Err(error) => {
                    self.record_invalid_as(tool, arguments, waited_ms, error.clone(), caller, Vec::new());
                    return Err(CallError::InvalidArgument(error));
                }
            };
            let (answer, injections) = match self.bus_call(index, spec, &args, caller.as_ref()) {
                Ok(played) => played,
                Err(CallError::InvalidArgument(error)) => {
                    self.record_invalid_as(tool, arguments, waited_ms, error.clone(), caller, Vec::new());
                    return Err(CallError::InvalidArgument(error));
                }
                Err(error) => return Err(error),
            };
            let mut reached = Reached::plain(index, tool, args.canonical(), waited_ms);
            reached.caller = caller;
            reached.mas_faults = injections;
            return Ok((reached, Delivery::Reply(answer)));
        }
        let Some(spec) = self.task.domain.tool(tool) else {
            let error = CallError::UnknownTool(tool.to_owned());
            self.record_invalid_as(tool, arguments, waited_ms, ArgError::new("tool_name", error.to_string()), caller, Vec::new());
            return Err(error);
        };
        let args = match spec.parse_arguments(arguments) {
            Ok(args) => args,
            Err(error) => {
                self.record_invalid_as(tool, arguments, waited_ms, error.clone(), caller, Vec::new());
                return Err(CallError::InvalidArgument(error));
            }
        };
        let as_sent = args.canonical();
        if let Some(refusal) = self.user_only(tool).or_else(|| self.unverified(tool)) {
            let mut reached = Reached::plain(index, tool, as_sent, waited_ms);
            reached.caller = caller;
            return Ok((reached, Delivery::Reply(refusal)));
        }
        let rewrite = team.rewrite_request(index, caller.as_ref(), spec.spec(), self.task.domain.tools(), &args);
        let played = match rewrite {
            None => self.run_tool(tool, super::Arguments::Text(arguments), spec, &args, options, waited_ms),
            Some(RequestFault::Route(routed, routed_args, injection)) => {
                let Some(routed) = self.task.domain.tool(routed.name) else { return Err(CallError::UnknownTool(routed.name.to_owned())) };
                self.run_tool(tool, super::Arguments::Text(arguments), routed, &routed_args, options, waited_ms).map(
                    |(mut reached, delivery)| {
                        reached.mas_faults.push(injection);
                        (reached, delivery)
                    },
                )
            }
            Some(RequestFault::Fill(altered, injection)) => {
                self.run_tool(tool, super::Arguments::Text(arguments), spec, &altered, options, waited_ms).map(|(mut reached, delivery)| {
                    reached.mas_faults.push(injection);
                    (reached, delivery)
                })
            }
            Some(RequestFault::Corrupt(error, injection)) => {
                self.record_invalid_as(tool, &as_sent, waited_ms, error.clone(), caller, vec![injection]);
                return Err(CallError::InvalidArgument(error));
            }
        };
        let (mut reached, mut delivery) = match played {
            Ok(played) => played,
            Err(error) => {
                // A refused idempotency key was recorded without its caller.
                if let Some(last) = self.trajectory.calls.last_mut().filter(|c| c.index == index)
                    && let Some(caller) = caller
                {
                    let extra = last.extra_mut();
                    (extra.agent, extra.role) = (Some(caller.id), caller.role);
                }
                return Err(error);
            }
        };
        // Recorded as sent: a replay of the same calls meets the same rewrites.
        reached.record.arguments = as_sent;
        reached.caller = caller;
        if reached.record.fault.is_none()
            && let Some(team) = self.team.as_deref()
            && let Delivery::Reply(Answer::Result(text)) = &delivery
            && let Some((text, injection)) = team.rewrite_reply(index, reached.caller.as_ref(), tool, text, reached.record.state_changed)
        {
            delivery = Delivery::Reply(Answer::Result(text));
            reached.mas_faults.push(injection);
        }
        Ok((reached, delivery))
    }

    /// Records a call refused as malformed, with its caller and the MAS-FIRE fault that made it so.
    pub(super) fn record_invalid_as(
        &mut self,
        tool: &str,
        arguments: &str,
        waited_ms: u64,
        error: ArgError,
        caller: Option<Caller>,
        mas_faults: Vec<Injection>,
    ) {
        let index = self.trajectory.calls.len() as u32;
        let mut reached = Reached::plain(
            index,
            crate::codec::cut(tool, super::MAX_RECORDED_TOOL_NAME_BYTES),
            crate::codec::cut(arguments, super::MAX_RECORDED_INVALID_BYTES).to_owned(),
            waited_ms,
        );
        (reached.caller, reached.mas_faults) = (caller, mas_faults);
        self.record(reached, Outcome::Invalid(Box::new(error)));
    }
}

/// The name of the verdict's check that a corrupted task was clarified.
pub const CLARIFICATION_CHECK: &str = "clarification asked before acting";
