//! The error taxonomy: VerifyMAS's 14 MAST failure modes (its Appendix B,
//! Table 4) and the finer toolenv error types beneath them.

use serde::Serialize;

toolenv_core::named_enum! {
    /// A MAST failure mode as VerifyMAS and AEGIS use them (FM-1.x task
    /// execution, FM-2.x communication and coordination, FM-3.x quality and verification).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Mast {
        /// Deviates from task requirements.
        Fm1_1 = "FM-1.1",
        /// Acts outside the assigned role.
        Fm1_2 = "FM-1.2",
        /// Adds redundant steps.
        Fm1_3 = "FM-1.3",
        /// Ignores conversation history.
        Fm1_4 = "FM-1.4",
        /// Misses stopping criteria.
        Fm1_5 = "FM-1.5",
        /// Repeats completed tasks.
        Fm2_1 = "FM-2.1",
        /// Makes requests ambiguous.
        Fm2_2 = "FM-2.2",
        /// Drifts from the main goal.
        Fm2_3 = "FM-2.3",
        /// Hides key information.
        Fm2_4 = "FM-2.4",
        /// Ignores other agents' inputs.
        Fm2_5 = "FM-2.5",
        /// Uses inconsistent reasoning.
        Fm2_6 = "FM-2.6",
        /// Stops the task prematurely.
        Fm3_1 = "FM-3.1",
        /// Skips verification steps.
        Fm3_2 = "FM-3.2",
        /// Performs incorrect verification.
        Fm3_3 = "FM-3.3",
    }
}

impl Mast {
    /// The failure mode's title, as VerifyMAS's Table 4 words it.
    pub fn title(self) -> &'static str {
        self.doc().trim_end_matches('.')
    }

    /// The category: 1 task execution, 2 communication and coordination, 3 quality and verification.
    pub fn category(self) -> u8 {
        self.name().as_bytes()[3] - b'0'
    }

    /// The hypothesis VerifyMAS pairs with a trajectory for this failure mode.
    pub fn hypothesis(self) -> String {
        format!("An agent in this trajectory {} ({}).", self.title().to_lowercase(), self.name())
    }
}

toolenv_core::named_enum! {
    /// A toolenv error type: what went wrong, decided by rules over the
    /// calls, the oracle's failed checks and the fault ledger.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum ErrorType {
        /// A write of a requested kind on another record (customer, flight, ticket, …).
        WrongEntity = "wrong_entity",
        /// A write of a requested kind on the right record with another value (date, time, amount, …).
        WrongValue = "wrong_value",
        /// A write of a kind the task did not ask for.
        UnrequestedWrite = "unrequested_write",
        /// A requested write made again after it had been applied.
        RepeatedWrite = "repeated_write",
        /// A blind retry of a write whose reply was lost but which had been applied.
        DuplicateWriteAfterAmbiguousCommit = "duplicate_write_after_ambiguous_commit",
        /// A required write met a recoverable fault and was never made.
        GaveUpAfterRecoverableFault = "gave_up_after_recoverable_fault",
        /// A required write was refused by a business rule and the agent went on as if not.
        IgnoredBusinessError = "ignored_business_error",
        /// The agent finished without a required write it never attempted.
        StoppedEarly = "stopped_early",
        /// The agent spent the episode's call budget.
        CallBudgetSpent = "call_budget_spent",
        /// Free text a policy constrains does not say what the policy requires.
        PolicyViolated = "policy_violated",
        /// The agent's final answer is wrong.
        AnswerWrong = "answer_wrong",
        /// A wrong write right after a reply a fault had altered (stale, cut,
        /// empty, drifted), which the agent did not read again.
        ActedOnFaultyReply = "acted_on_faulty_reply",
        /// An injected fault no agent gets past (a suspension) made success impossible: the environment's.
        UnrecoverableFault = "unrecoverable_fault",
        /// A team acted on a task description a MAS-FIRE instruction fault had
        /// made ambiguous or contradictory without asking the user first.
        NoClarificationAsked = "no_clarification_asked",
        /// The simulated user (an LLM user) told a slot wrong, or not at all,
        /// and the episode passes with the true answer: the user's.
        UserMisinformed = "user_misinformed",
    }
}

impl ErrorType {
    /// The MAST failure mode the type maps to; `None` for the environment's faults.
    pub fn mast(self) -> Option<Mast> {
        Some(match self {
            ErrorType::WrongEntity | ErrorType::WrongValue | ErrorType::PolicyViolated => Mast::Fm1_1,
            ErrorType::UnrequestedWrite => Mast::Fm2_3,
            ErrorType::RepeatedWrite | ErrorType::DuplicateWriteAfterAmbiguousCommit => Mast::Fm2_1,
            ErrorType::GaveUpAfterRecoverableFault | ErrorType::StoppedEarly => Mast::Fm3_1,
            ErrorType::IgnoredBusinessError => Mast::Fm1_4,
            ErrorType::CallBudgetSpent => Mast::Fm1_5,
            ErrorType::AnswerWrong => Mast::Fm3_3,
            ErrorType::ActedOnFaultyReply => Mast::Fm3_2,
            ErrorType::NoClarificationAsked => Mast::Fm2_2,
            // MAST's "hiding or distorting important information", by the user.
            ErrorType::UserMisinformed => Mast::Fm2_4,
            ErrorType::UnrecoverableFault => return None,
        })
    }
}

impl Serialize for Mast {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl Serialize for ErrorType {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}
