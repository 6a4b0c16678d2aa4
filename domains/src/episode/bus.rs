//! The message bus of a multi-agent episode: messages sent to an agent, a
//! role or everyone, each agent's inbox, and the shared pool of every
//! message sent.
//!
//! The bus is part of the episode's determinism: a message's id is the
//! index of the call that sent it, and every delivery gets the next number
//! of a per-episode sequence, so what a read returns depends on the order
//! of the episode's calls, never on wall-clock arrival.

use serde_json::{Value, json};

use crate::tool::{Param, ParamType, ToolSpec};

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
