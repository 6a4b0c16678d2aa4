//! The JSON-lines export of a run (`toolenv export`): one line per recorded
//! episode, from the run's plan and its episodes as any backend reads them
//! back.

use std::io::Write;

use toolenv::pb;

use super::{RunId, StoreError, StoredEpisode, finite};
use toolenv_runs::PlannedEpisode;

/// Writes the recorded `episodes` of `run` as JSON lines, in their order,
/// each with its entry of `plan`, and returns how many; what a line holds is
/// documented where users call it ([`super::Store::export_jsonl`]).
pub(super) fn write_jsonl(
    run: &RunId,
    plan: &[PlannedEpisode],
    episodes: Vec<StoredEpisode>,
    mut writer: impl Write,
) -> Result<u64, StoreError> {
    let mut count = 0;
    for episode in episodes {
        let planned = plan
            .get(episode.plan_index)
            .ok_or_else(|| StoreError::Corrupt(format!("{run} #{}: recorded but not planned", episode.plan_index)))?;
        let request = &planned.request;
        let line = serde_json::json!({
            "run": run,
            "plan_index": episode.plan_index,
            "session": episode.session,
            "replaced_infra_errors": episode.replaced_infra_errors,
            "planned": {
                "agent": planned.agent,
                "task_id": request.task_id,
                "seed": request.seed,
                "trial": request.trial,
                "epsilon": request.epsilon,
                "fault_profile": planned.fault_profile,
                "lambda": finite(planned.lambda),
                "only": request.fault_profile.as_ref().map(|p| p.only.clone()).unwrap_or_default(),
                "fault_delivery": request.fault_delivery().as_str_name(),
                "time_scale": request.time_scale,
            },
            "result": episode.result,
            "trajectory": episode.trajectory.as_ref().map(pb::Trajectory::to_json),
        });
        serde_json::to_writer(&mut writer, &line)?;
        writer.write_all(b"\n")?;
        count += 1;
    }
    writer.flush()?;
    Ok(count)
}
