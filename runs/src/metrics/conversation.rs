//! Conversational reliability: how an agent deals with a task whose
//! description leaves something out (see `toolenv_domains::generate::conversation`).
//!
//! - Clarification recall: of the episodes whose task withheld a slot, the
//!   share where the agent asked the user (`ask_user`) at least once.
//! - Clarification precision: of the episodes whose task withheld nothing
//!   (given in full, the user has nothing to add), the share where the agent
//!   did not ask: asking needlessly lowers it.
//! - User turns per episode: `ask_user` calls per conversational episode;
//!   of all of them, how many an LLM user answered (0: the rule-based user).
//! - pass^k of the conversational tasks beside pass^k of the same tasks
//!   given in full (their generated originals), when the run played both.

use serde::Serialize;

use super::{EpisodeResult, InfraConvention, MetricsError, PassK, Rate, pass_hat_k};
use toolenv_domains::generate::{conversation::generated_id, resolve};

/// One agent's conversational figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationFigures {
    /// Episodes of conversational tasks.
    pub episodes: u64,
    /// Episodes that asked, over those whose task withheld a slot.
    pub recall: Rate,
    /// Episodes that did not ask, over those whose task withheld nothing.
    pub precision: Rate,
    /// Mean `ask_user` calls per conversational episode.
    pub user_turns_per_episode: f64,
    /// Turns an LLM user answered, over every episode counted: 0 when the
    /// rule-based user played (what tells LLM-user runs apart).
    pub llm_user_turns: u64,
    /// pass^k over the conversational tasks.
    pub pass_k: PassK,
    /// pass^k over the same tasks given in full, over the episodes of
    /// them the run has; `None` when it has none.
    pub pass_k_in_full: Option<PassK>,
}

/// Whether a task id is a conversational variant's.
pub fn is_conversational(task_id: &str) -> bool {
    generated_id(task_id).is_some()
}

/// Whether the conversational task of an id withholds a slot (resolving
/// it; an id this build cannot resolve counts as withholding nothing).
fn withholds(task_id: &str) -> bool {
    resolve(task_id).ok().and_then(|t| t.conversation.as_ref().map(|c| !c.withheld.is_empty())).unwrap_or(false)
}

/// The conversational figures of one agent's episodes (`None` when none is
/// of a conversational task); `all` is every episode of the agent, where
/// the tasks given in full are looked for.
pub fn conversation_figures(
    mine: &[&EpisodeResult],
    k: u32,
    convention: InfraConvention,
) -> Result<Option<ConversationFigures>, MetricsError> {
    let conversational: Vec<&EpisodeResult> = mine.iter().copied().filter(|e| is_conversational(&e.task_id)).collect();
    if conversational.is_empty() {
        return Ok(None);
    }
    let counted: Vec<&EpisodeResult> = conversational.iter().copied().filter(|e| !e.is_infra_error()).collect();
    let mut withheld = std::collections::BTreeMap::new();
    let (mut asked, mut with_slot, mut quiet, mut in_full) = (0, 0, 0, 0);
    for e in &counted {
        if *withheld.entry(e.task_id.as_str()).or_insert_with(|| withholds(&e.task_id)) {
            with_slot += 1;
            asked += u64::from(e.user_turns > 0);
        } else {
            in_full += 1;
            quiet += u64::from(e.user_turns == 0);
        }
    }
    let turns: u64 = counted.iter().map(|e| u64::from(e.user_turns)).sum();
    let originals: std::collections::BTreeSet<String> = conversational.iter().filter_map(|e| generated_id(&e.task_id)).collect();
    let full: Vec<&EpisodeResult> = mine.iter().copied().filter(|e| originals.contains(&e.task_id)).collect();
    Ok(Some(ConversationFigures {
        episodes: conversational.len() as u64,
        recall: Rate::new(asked, with_slot),
        precision: Rate::new(quiet, in_full),
        user_turns_per_episode: if counted.is_empty() { 0.0 } else { turns as f64 / counted.len() as f64 },
        llm_user_turns: counted.iter().map(|e| u64::from(e.llm_user_turns)).sum(),
        pass_k: pass_hat_k(conversational.iter().copied(), k, convention)?,
        pass_k_in_full: if full.is_empty() { None } else { Some(pass_hat_k(full.iter().copied(), k, convention)?) },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{EpisodeOutcome, tests::episode};

    #[test]
    fn recall_precision_turns_and_pass_k_beside_the_tasks_in_full() {
        let suite: toolenv_domains::generate::Suite = "conversational:2026:2".parse().unwrap();
        let tasks = suite.tasks(Some(toolenv_domains::registry::ALL[0]), Some(1));
        let (full, withholding) = (&tasks[0], &tasks[1]);
        assert!(full.conversation.as_ref().unwrap().withheld.is_empty() && !withholding.conversation.as_ref().unwrap().withheld.is_empty());
        let mut episodes = Vec::new();
        for trial in 0..2 {
            // Asks where something is withheld (passes), asks needlessly once where nothing is.
            let mut e = episode(&withholding.id, trial, EpisodeOutcome::Passed);
            e.user_turns = 2;
            episodes.push(e);
            let mut e = episode(&full.id, trial, if trial == 0 { EpisodeOutcome::Passed } else { EpisodeOutcome::Failed });
            e.user_turns = u32::from(trial == 0);
            episodes.push(e);
            episodes.push(episode(&generated_id(&withholding.id).unwrap(), trial, EpisodeOutcome::Passed));
            episodes.push(episode(&generated_id(&full.id).unwrap(), trial, EpisodeOutcome::Passed));
        }
        let mine: Vec<&EpisodeResult> = episodes.iter().collect();
        let figures = conversation_figures(&mine, 2, InfraConvention::CountAsFailure).unwrap().unwrap();
        assert_eq!(figures.episodes, 4);
        assert_eq!((figures.recall.successes, figures.recall.total), (2, 2));
        assert_eq!((figures.precision.successes, figures.precision.total), (1, 2));
        assert!((figures.user_turns_per_episode - 5.0 / 4.0).abs() < 1e-9);
        assert_eq!(figures.llm_user_turns, 0);
        assert_eq!(figures.pass_k.value.map(|v| v.to_f64()), Some(0.5));
        assert_eq!(figures.pass_k_in_full.and_then(|p| p.value).map(|v| v.to_f64()), Some(1.0));
        // No conversational episode: no figures.
        let plain: Vec<&EpisodeResult> = episodes.iter().filter(|e| !is_conversational(&e.task_id)).collect();
        assert_eq!(conversation_figures(&plain, 2, InfraConvention::CountAsFailure).unwrap(), None);
    }
}
