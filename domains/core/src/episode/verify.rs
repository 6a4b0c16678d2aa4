//! Verification by a code (dual control where information flows from the
//! state through the user): in a conversational task whose write needs the
//! customer verified ([`crate::user::Verification`]), the episode offers
//! two tools besides its domain's, [`SEND_CODE`] and [`VERIFY`], refuses
//! the write until the customer is verified, and plays the user's reading
//! of the code on their phone ([`READ_CODE`]) when asked for it.
//!
//! What was sent and verified is read from the trajectory itself (the
//! calls' records), so a fork, which replays the calls, has it too, and
//! the domain's state and tools are untouched: the task given in full
//! has neither the tools nor the refusal. Wrong codes are bounded
//! ([`MAX_CODE_ATTEMPTS`] in an episode), so guessing cannot get through.

use serde_json::{Value, json};

use super::{CallError, CallRecord, Caller, Episode, Reached, UserCall};
use crate::{
    delivery::{Answer, Delivery, Outcome},
    json,
    tool::{DomainError, Param, ParamType, ToolSpec},
    user::{CODE_SLOT, Hearing, MAX_CODE_ATTEMPTS, READ_CODE, SEND_CODE, VERIFY, Verification},
};

const CUSTOMER_ID: Param = Param::required("customer_id", ParamType::String, "Customer id, e.g. C-101.");

/// The tools of a task with a verification, in the order agents see them (after the domain's).
pub static VERIFICATION_TOOLS: [ToolSpec; 2] = [
    ToolSpec {
        name: SEND_CODE,
        description: "Sends a one-time verification code to a customer's phone. Only the customer can read it: \
                      ask the user for it, then verify it with verify_customer.",
        params: &[CUSTOMER_ID],
        mutates_state: false,
    },
    ToolSpec {
        name: VERIFY,
        description: "Verifies a customer with the code sent to their phone. Some writes are refused until the customer \
                      is verified. At most 3 wrong codes are taken in a conversation.",
        params: &[CUSTOMER_ID, Param::required("code", ParamType::String, "The code the customer read to you.")],
        mutates_state: false,
    },
];

/// The customer a record's call names, if it was one of `tool` that succeeded.
fn succeeded(record: &CallRecord, tool: &str) -> Option<String> {
    if record.tool != tool || !matches!(record.outcome, Outcome::Result(_)) {
        return None;
    }
    let arguments: Value = serde_json::from_str(&record.arguments).ok()?;
    arguments.get("customer_id").and_then(Value::as_str).map(str::to_owned)
}

impl Episode {
    /// The task's verification, if its conversation has one.
    fn verification(&self) -> Option<&Verification> {
        self.task.conversation.as_ref()?.verification.as_ref()
    }

    /// The verification tools this episode offers: both in a task with a verification, none otherwise.
    pub(super) fn verification_tools(&self) -> &'static [ToolSpec] {
        if self.verification().is_some() { &VERIFICATION_TOOLS } else { &[] }
    }

    /// Whether a code was sent to `customer` in this episode.
    fn code_sent(&self, customer: &str) -> bool {
        self.trajectory.calls.iter().any(|c| succeeded(c, SEND_CODE).as_deref() == Some(customer))
    }

    /// Whether `customer` was verified in this episode.
    pub fn verified(&self, customer: &str) -> bool {
        self.trajectory.calls.iter().any(|c| succeeded(c, VERIFY).as_deref() == Some(customer))
    }

    /// How many wrong codes [`VERIFY`] was given in this episode.
    fn wrong_codes(&self) -> usize {
        self.trajectory
            .calls
            .iter()
            .filter(|c| c.tool == VERIFY && matches!(&c.outcome, Outcome::Error(e) if e.code == "WRONG_CODE"))
            .count()
    }

    /// A call of a verification tool, played; `None` when `tool` is none
    /// of this episode's.
    pub(super) fn verification_call(
        &mut self,
        index: u32,
        tool: &str,
        arguments: &super::Arguments<'_>,
        caller: Option<Caller>,
        waited_ms: u64,
    ) -> Option<Result<(Reached, Delivery), CallError>> {
        let spec = self.verification_tools().iter().find(|t| t.name == tool)?;
        let parsed =
            if let super::Arguments::Json(value) = arguments { spec.arguments_of(value) } else { spec.parse_arguments(&arguments.text()) };
        let args = match parsed {
            Ok(args) => args,
            Err(error) => {
                let refused = CallError::InvalidArgument(error.clone());
                self.record_invalid_as(tool, &arguments.text(), waited_ms, error, caller, Vec::new());
                return Some(Err(refused));
            }
        };
        let customer = args.str("customer_id").to_owned();
        let answer = if tool == SEND_CODE {
            // Sent to any customer's phone; only the user's own is read.
            Answer::Result(json::canonical(&json!({"customer_id": customer, "sent": true})))
        } else {
            self.check_code(&customer, args.str("code").trim())
        };
        let mut reached = Reached::plain(index, tool, args.canonical(), waited_ms);
        reached.caller = caller;
        Some(Ok((reached, Delivery::Reply(answer))))
    }

    /// What [`VERIFY`] says to a code for `customer`.
    fn check_code(&self, customer: &str, code: &str) -> Answer {
        let Some(task_id) = self.verification().map(|_| self.task.id.as_str()) else {
            return Answer::Error(DomainError::new("UNKNOWN_TOOL", format!("no tool {VERIFY}")));
        };
        let wrong = self.wrong_codes();
        if wrong >= MAX_CODE_ATTEMPTS {
            return Answer::Error(DomainError::new(
                "TOO_MANY_ATTEMPTS",
                format!("{wrong} wrong codes were given: verification is locked for this conversation"),
            ));
        }
        if !self.code_sent(customer) {
            return Answer::Error(DomainError::new(
                "NO_CODE_SENT",
                format!("no code was sent to customer {}: call {SEND_CODE} first", crate::codec::cut(customer, 40)),
            ));
        }
        if code != Verification::code_of(task_id, customer) {
            let left = MAX_CODE_ATTEMPTS - wrong - 1;
            return Answer::Error(DomainError::new("WRONG_CODE", format!("the code is wrong; {left} attempts left")));
        }
        Answer::Result(json::canonical(&json!({"customer_id": customer, "verified": true})))
    }

    /// The refusal of a call of the write that needs the customer verified,
    /// before they are.
    pub(super) fn unverified(&self, tool: &str) -> Option<Answer> {
        let v = self.verification().filter(|v| v.tool == tool)?;
        if self.verified(&v.customer) {
            return None;
        }
        Some(Answer::Error(DomainError::new(
            "VERIFICATION_REQUIRED",
            format!(
                "the customer must be verified before you {}: {SEND_CODE} to their customer id, ask the user (ask_user) \
                 for the code, then {VERIFY}",
                v.what
            ),
        )))
    }

    /// The user reads the code on their phone, when the question asked for
    /// it: what they say and tell is added to the hearing, and their call
    /// is returned for the turn's record.
    pub(super) fn read_code(&self, hearing: &mut Hearing) -> Option<UserCall> {
        let v = self.verification().filter(|_| hearing.read_code)?;
        let (outcome, said) = if self.code_sent(&v.customer) {
            hearing.told.insert(CODE_SLOT, v.code.clone());
            (Outcome::Result(json::canonical(&json!({"code": v.code}))), format!("The code on my phone is {}.", v.code))
        } else {
            let error = DomainError::new("NO_CODE", "no verification code has arrived on this phone");
            (Outcome::Error(Box::new(error)), "I have not received any code on my phone.".to_owned())
        };
        hearing.text = if hearing.text.is_empty() { said } else { format!("{} {said}", hearing.text) };
        Some(UserCall { tool: READ_CODE.to_owned(), arguments: "{}".to_owned(), outcome })
    }
}
