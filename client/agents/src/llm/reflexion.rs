//! Reflexion within an episode: the ReAct loop plus a self-reflection step
//! after a failed call (an injected fault or a domain error) and once before
//! finishing. The reflection is a user turn asking the model to reason about
//! what went wrong or what is left; its answer stays in the conversation.
//! Nothing carries over between episodes, so trials stay independent and
//! pass^k keeps its meaning.

/// What the model is asked after a call that failed.
pub(crate) fn after_failure(tool: &str) -> String {
    format!(
        "Reflection: the call to {tool} did not succeed. In one or two sentences, say what went wrong \
         (a transient failure worth retrying, a rule of the domain, a wrong argument) and what you will do \
         next; then continue with your next tool call."
    )
}

/// What the model is asked once, when it first says it is done.
pub(crate) fn before_finishing() -> String {
    "Reflection: before you finish, check the task again. Is every part of it done, with the exact values \
     the task gives (names, dates, times, amounts, identifiers), and did every call that changes something \
     succeed? If something is left or failed, make the calls now; if everything is done, give your final \
     answer to the user again, in full, as you did before."
        .to_owned()
}

/// Whether a tool's observation is a failure worth reflecting on.
pub(crate) fn is_failure(observation: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(observation).is_ok_and(|v| v.get("error").is_some_and(|e| !e.is_null()))
}
