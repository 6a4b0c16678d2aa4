//! The conversational section of the HTML report: clarification recall and
//! precision, user turns per episode, and pass^k of the conversational tasks
//! beside the same tasks given in full.

use super::RunFigures;
use super::markup::{Fmt, agent_rows, count, esc, num, pass, table};

/// One run's conversational figures, a row per agent that played conversational tasks.
pub(super) fn conversation(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let k = run.report.k;
    let head = [
        "agent",
        "episodes",
        "clarification recall",
        "clarification precision",
        "user turns per episode",
        "answered by an LLM user",
        &format!("pass^{k}"),
        &format!("pass^{k} given in full"),
    ]
    .map(str::to_owned);
    let rows = agent_rows(run, i, |ptr, agent| {
        let c = agent.conversation.as_ref()?;
        let p = ptr.field("conversation");
        Some(vec![
            esc(&agent.agent),
            count(&p.field("episodes"), c.episodes),
            num(&p.field("recall").field("value"), c.recall.value, Fmt::Pct(1)),
            num(&p.field("precision").field("value"), c.precision.value, Fmt::Pct(1)),
            num(&p.field("user_turns_per_episode"), Some(c.user_turns_per_episode), Fmt::Fixed(2)),
            count(&p.field("llm_user_turns"), c.llm_user_turns),
            pass(&p.field("pass_k"), &c.pass_k),
            c.pass_k_in_full.as_ref().map_or("n/a".to_owned(), |full| pass(&p.field("pass_k_in_full"), full)),
        ])
    });
    (!rows.is_empty()).then(|| table("conversation", &head, &rows))
}
