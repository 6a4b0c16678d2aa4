//! The message bus of a multi-agent episode: messages sent to an agent, a
//! role or everyone, each agent's inbox, and the shared pool of every
//! message sent.
//!
//! The bus is part of the episode's determinism: a message's id is the
//! index of the call that sent it, and every delivery gets the next number
//! of a per-episode sequence, so what a read returns depends on the order
//! of the episode's calls, never on wall-clock arrival.

use serde_json::{Value, json};

use super::Caller;
use super::{CallError, Episode};
use crate::{
    delivery::Answer,
    json,
    masfire::{Injection, InjectionPoint, MasFault, rewrite},
    tool::{ArgError, Args, DomainError, Param, ParamType, ToolSpec},
};

/// Most messages an episode's agents may send.
pub const MAX_MESSAGES: u32 = 100;
/// Most bytes of one message's body.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024;
/// Most agents that may join one episode.
pub const MAX_AGENTS: usize = 32;

/// Sends a message.
pub const SEND_MESSAGE: &str = "send_message";
/// Reads one's inbox.
pub const READ_INBOX: &str = "read_inbox";
/// Reads the shared pool.
pub const READ_POOL: &str = "read_pool";
/// Asks the user a clarifying question.
pub const ASK_USER: &str = "ask_user";
/// What the trajectory calls an agent's joining (not a tool agents call: the `JoinEpisode` request).
pub const JOIN: &str = "join";

/// The bus tools of a multi-agent episode, in the order agents see them
/// (after the domain's tools); `ask_user` alone is offered to a
/// single-agent episode with a MAS-FIRE profile.
pub static BUS_TOOLS: [ToolSpec; 4] = [
    ToolSpec {
        name: SEND_MESSAGE,
        description: "Send a message to another agent (by agent id), to every agent of a role (by role name), or to everyone ('*'). \
                      A plan for another agent may be sent as JSON text such as {\"plan\": [{\"tool\": \"…\", \"arguments\": {…}}]}.",
        params: &[
            Param::required("to", ParamType::String, "an agent id, a role name, or '*' for every other agent"),
            Param::required("body", ParamType::String, "the message text (at most 16 KiB)"),
        ],
        mutates_state: false,
    },
    ToolSpec {
        name: READ_INBOX,
        description: "Read the messages delivered to you (to your agent id, your role or everyone), oldest first, \
                      after a delivery sequence number. Reading does not consume: read again with the same after_seq to see them again.",
        params: &[Param::optional("after_seq", ParamType::Integer, "return deliveries with a larger sequence number (default 0: all)")],
        mutates_state: false,
    },
    ToolSpec {
        name: READ_POOL,
        description: "Read the shared message pool: every message any agent sent, in the order sent, after a message id.",
        params: &[Param::optional("after_id", ParamType::Integer, "return messages with a larger id (default: all)")],
        mutates_state: false,
    },
    ToolSpec {
        name: ASK_USER,
        description: "Ask the user a clarifying question when the task is ambiguous or contradicts itself. The user answers at once.",
        params: &[Param::required("question", ParamType::String, "the question")],
        mutates_state: false,
    },
];

/// A bus tool's spec by name.
pub fn bus_tool(name: &str) -> Option<&'static ToolSpec> {
    BUS_TOOLS.iter().find(|t| t.name == name)
}

/// A message as sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    /// The id: the index of the call that sent it.
    pub id: u32,
    /// The sender's agent id.
    pub from: String,
    /// The sender's role.
    pub from_role: String,
    /// The address as the sender wrote it.
    pub to: String,
    /// The body as delivered (a rewritten plan, if an inexecutable-plan fault met it).
    pub body: String,
}

/// Who one delivery of a message is for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Address {
    /// One agent, by id.
    Agent(String),
    /// Every agent of a role.
    Role(String),
    /// Every agent but the sender.
    Everyone,
}

/// One delivery of a message into inboxes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Delivery {
    /// The per-episode delivery sequence number, from 1.
    pub seq: u32,
    /// Index into the bus's messages.
    pub message: usize,
    /// Who it is for.
    pub to: Address,
}

/// The bus of one episode.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bus {
    pub messages: Vec<Message>,
    pub deliveries: Vec<Delivery>,
}

impl Bus {
    /// Adds a message and returns its index.
    pub fn post(&mut self, message: Message) -> usize {
        self.messages.push(message);
        self.messages.len() - 1
    }

    /// Delivers message `message` to `to`; returns the delivery's sequence number.
    pub fn deliver(&mut self, message: usize, to: Address) -> u32 {
        let seq = self.deliveries.len() as u32 + 1;
        self.deliveries.push(Delivery { seq, message, to });
        seq
    }

    /// The deliveries for an agent of a role, after `after_seq`, oldest first.
    pub fn inbox<'a>(&'a self, agent: &'a str, role: &'a str, after_seq: u32) -> impl Iterator<Item = &'a Delivery> + 'a {
        self.deliveries.iter().filter(move |d| {
            d.seq > after_seq
                && match &d.to {
                    Address::Agent(id) => id == agent,
                    Address::Role(r) => r == role,
                    Address::Everyone => self.messages[d.message].from != agent,
                }
        })
    }

    /// A delivery as the recipient reads it.
    pub fn delivered(&self, delivery: &Delivery) -> Value {
        let m = &self.messages[delivery.message];
        json!({"seq": delivery.seq, "message_id": m.id, "from": m.from, "from_role": m.from_role, "to": m.to, "body": m.body})
    }

    /// A message as the pool shows it.
    pub fn pooled(message: &Message) -> Value {
        json!({"message_id": message.id, "from": message.from, "from_role": message.from_role, "to": message.to, "body": message.body})
    }
}

impl Episode {
    /// A bus tool's call: checked, played, and its answer with the faults that met it.
    pub(super) fn bus_call(
        &mut self,
        index: u32,
        spec: &'static ToolSpec,
        args: &Args,
        caller: Option<&Caller>,
    ) -> Result<(Answer, Vec<Injection>), CallError> {
        let task = self.task.clone();
        let user_answer = self.user_answer();
        let Some(team) = self.team.as_deref_mut() else { return Err(CallError::UnknownTool(spec.name.to_owned())) };
        let (agent, role) = match caller {
            Some(Caller { id, role }) => (id.clone(), role.clone().unwrap_or_default()),
            None => (String::new(), String::new()),
        };
        let targeted = team.targets(caller.and_then(|c| c.role.as_deref())).cloned();
        let reply = |value: Value| Answer::Result(json::canonical(&value));
        match spec.name {
            ASK_USER => Ok((reply(json!({"answer": user_answer})), Vec::new())),
            SEND_MESSAGE => {
                let body = args.str("body").to_owned();
                if body.len() > MAX_MESSAGE_BYTES {
                    return Err(CallError::InvalidArgument(ArgError::new(
                        "body",
                        format!("a message body may hold at most {} bytes; this one has {}", MAX_MESSAGE_BYTES, body.len()),
                    )));
                }
                if team.bus.messages.len() >= MAX_MESSAGES as usize {
                    return Err(CallError::BusLimit(format!(
                        "this episode's agents have sent the most messages it accepts ({})",
                        MAX_MESSAGES
                    )));
                }
                let to = args.str("to").to_owned();
                let address = if to == "*" {
                    Address::Everyone
                } else if team.agents.iter().any(|(a, _)| *a == to) {
                    Address::Agent(to.clone())
                } else if team.role(&to).is_some() {
                    Address::Role(to.clone())
                } else {
                    let message = format!("no agent or role '{}' in this episode", crate::codec::cut(&to, 64));
                    return Ok((Answer::Error(DomainError::new("UNKNOWN_RECIPIENT", message)), Vec::new()));
                };
                let fault = targeted.as_ref().and_then(|p| p.draw(&team.dice, index, InjectionPoint::Send));
                let mut injections = Vec::new();
                let mut body_sent = body;
                if fault == Some(MasFault::InexecutablePlan)
                    && let Some((broken, original_tool, bogus_tool)) = rewrite::break_plan(&body_sent, task.domain.tools())
                {
                    body_sent = broken;
                    injections.push(Injection::InexecutablePlan { message: index, original_tool, bogus_tool });
                }
                let message = team.bus.post(Message { id: index, from: agent.clone(), from_role: role, to: to.clone(), body: body_sent });
                match fault {
                    Some(MasFault::MessageCycle) => {
                        team.bus.deliver(message, Address::Agent(agent.clone()));
                        injections.push(Injection::MessageCycle { message: index, intended_to: to });
                    }
                    Some(MasFault::MessageStorm) => {
                        let copies = targeted.as_ref().map_or(1, |p| p.storm_copies);
                        for _ in 0..copies {
                            team.bus.deliver(message, address.clone());
                        }
                        injections.push(Injection::MessageStorm { message: index, copies });
                    }
                    Some(MasFault::BroadcastAmplification) => {
                        team.bus.deliver(message, address.clone());
                        let extra: Vec<String> = team
                            .agents
                            .iter()
                            .filter(|(a, r)| {
                                *a != agent
                                    && match &address {
                                        Address::Agent(id) => a != id,
                                        Address::Role(name) => r != name,
                                        Address::Everyone => false,
                                    }
                            })
                            .map(|(a, _)| a.clone())
                            .collect();
                        for a in &extra {
                            team.bus.deliver(message, Address::Agent(a.clone()));
                        }
                        if !extra.is_empty() {
                            injections.push(Injection::BroadcastAmplification { message: index, extra_recipients: extra });
                        }
                    }
                    _ => {
                        team.bus.deliver(message, address);
                    }
                }
                Ok((reply(json!({"message_id": index, "sent": true})), injections))
            }
            READ_INBOX | READ_POOL => {
                let pool = spec.name == READ_POOL;
                let mut items: Vec<(u32, Value)> = if pool {
                    let after = args.opt_i64("after_id").unwrap_or(-1);
                    team.bus.messages.iter().filter(|m| i64::from(m.id) > after).map(|m| (m.id, Bus::pooled(m))).collect()
                } else {
                    let after = args.opt_i64("after_seq").unwrap_or(0).clamp(0, i64::from(u32::MAX)) as u32;
                    team.bus.inbox(&agent, &role, after).map(|d| (d.seq, team.bus.delivered(d))).collect()
                };
                let last = items.last().map(|(n, _)| *n);
                let mut injections = Vec::new();
                if !items.is_empty()
                    && targeted.as_ref().and_then(|p| p.draw(&team.dice, index, InjectionPoint::Read)) == Some(MasFault::MemoryLoss)
                {
                    let pruned: Vec<u32> = items.drain(..items.len().div_ceil(2)).map(|(n, _)| n).collect();
                    injections.push(Injection::MemoryLoss { pruned });
                }
                let list: Vec<Value> = items.into_iter().map(|(_, v)| v).collect();
                let value = if pool {
                    json!({"messages": list, "last_id": last})
                } else {
                    json!({"messages": list, "last_seq": last.unwrap_or(0)})
                };
                Ok((reply(value), injections))
            }
            other => Err(CallError::UnknownTool(other.to_owned())),
        }
    }

    /// What the simulated user answers any question: the withheld slot of an
    /// ambiguous task, the retraction of a conflicting constraint, or that
    /// the task is complete as given.
    fn user_answer(&self) -> String {
        let mut answers = Vec::new();
        for injection in &self.trajectory.prompt_faults {
            match injection {
                Injection::InstructionAmbiguity { slot, withheld, vague } => {
                    answers.push(format!("By \"{vague}\" I mean: the {} is {withheld}.", slot.replace('_', " ")));
                }
                Injection::InstructionLogicConflict { constraint, .. } => {
                    answers.push(format!("Please ignore \"{constraint}\": that was a mistake; do the task without it."));
                }
                _ => {}
            }
        }
        if answers.is_empty() { "The task description is complete as given; please go ahead.".to_owned() } else { answers.join(" ") }
    }
}
