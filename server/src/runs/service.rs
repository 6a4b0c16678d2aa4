//! The `toolenv.v1.Runs` service: thin handlers that check a request, ask
//! the store ([`RunHost`]) or a run's lease queue ([`Queue`]), and answer.
//! Creating a leased episode is the episode service's
//! ([`ToolEnvService::open_episode`]).

use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Response, Status};
use toolenv::pb;
use toolenv_runs::metrics::{InfraConvention, Population};
use toolenv_runs::{Grid, PlannedEpisode, compare, report, trials_of};
use toolenv_store::AnyStore;

use super::leases::{LeaseTag, Pick, Queue};
use super::{DEFAULT_LEASE_TIMEOUT, RunHost, run_message, with_suite};
use crate::error::Error;
use crate::limits;
use crate::service::ToolEnvService;

/// Most episodes one run may plan.
const MAX_PLANNED: usize = 200_000;

/// Longest a `NextEpisode` waits for a leased episode to come back before
/// it answers "ask again".
const LONG_POLL: Duration = Duration::from_secs(5);

/// The `toolenv.v1.Runs` service.
#[derive(Debug, Clone)]
pub struct RunsService {
    env: ToolEnvService,
}

impl RunsService {
    pub(crate) fn new(env: ToolEnvService) -> Self {
        Self { env }
    }

    fn host(&self) -> &RunHost {
        self.env.runs()
    }

    /// Checks a create-run request and turns it into a plan.
    fn plan(&self, request: &pb::CreateRunRequest) -> Result<Vec<PlannedEpisode>, Error> {
        if request.agents.is_empty() {
            return Err(Error::MissingField("agents"));
        }
        limits::text("description", &request.description, limits::MAX_DESCRIPTION_BYTES)?;
        limits::list("agents", &request.agents, limits::MAX_NAME_BYTES)?;
        limits::text("preset", &request.preset, limits::MAX_NAME_BYTES)?;
        limits::list("fault_profiles", &request.fault_profiles, limits::MAX_NAME_BYTES)?;
        limits::text("suite", &request.suite, limits::MAX_NAME_BYTES)?;
        limits::roles("roles", &request.roles)?;
        if request.epsilons.len() > limits::MAX_LIST_LEN {
            return Err(Error::invalid("epsilons", format!("at most {} entries", limits::MAX_LIST_LEN)));
        }
        if let Some(epsilon) = request.epsilons.iter().find(|e| !e.is_finite()) {
            return Err(Error::invalid("epsilons", format!("must be finite numbers, got {epsilon}")));
        }
        let fault_delivery: pb::FaultDelivery = limits::known_enum("fault_delivery", request.fault_delivery)?;
        let agents = request.agents.clone();
        let customised = !request.epsilons.is_empty() || !request.fault_profiles.is_empty() || request.trials != 0;
        let mut grid = match request.preset.as_str() {
            "" => Grid {
                epsilons: if request.epsilons.is_empty() { vec![0.0] } else { request.epsilons.clone() },
                fault_profiles: request.fault_profiles.clone(),
                trials: request.trials.max(1),
                ..Grid::single(agents)
            },
            preset @ ("paper" | "ablation" | "mas-fire") if customised => {
                return Err(Error::invalid("preset", format!("the {preset} preset fixes ε, fault profiles and trials; leave them unset")));
            }
            "paper" => Grid::paper(agents),
            "ablation" => Grid::ablation(agents),
            "mas-fire" => Grid::mas_fire(agents),
            other => return Err(Error::invalid("preset", format!("presets are \"paper\", \"ablation\" and \"mas-fire\", got {other:?}"))),
        };
        if let Some(role) = request.roles.iter().find(|r| !toolenv_core::masfire::valid_name(&r.name)) {
            return Err(Error::invalid("roles", format!("'{}' is not a role name (1–64 letters, digits, '-', '_')", role.name)));
        }
        grid.seed = request.seed;
        grid.seeds = request.seeds.max(1);
        grid.time_scale = request.time_scale;
        grid.fault_delivery = fault_delivery;
        let named = &self.env.config().fault_profiles;
        grid.validate(|name| named.contains_key(name)).map_err(|e| Error::invalid(e.field(), e.to_string()))?;
        let (suite, domain, level) = self.env.suite_filter(&request.suite, request.domain, request.level)?;
        let tasks = suite.count(domain, level);
        if tasks == 0 {
            return Err(Error::invalid("level", "no task matches the domain and level"));
        }
        // Sized before any task is generated.
        let size = [grid.agents.len(), grid.epsilons.len(), grid.fault_profiles.len().max(1), tasks, grid.trials as usize]
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n))
            .unwrap_or(usize::MAX);
        if size > MAX_PLANNED {
            return Err(Error::invalid("agents", format!("the grid has {size} episodes; a run may plan at most {MAX_PLANNED}")));
        }
        let tasks = suite.tasks(domain, level);
        let mut plan = grid.plan(tasks.iter().map(|t| t.id.as_str()));
        for planned in &mut plan {
            planned.request.roles.clone_from(&request.roles);
        }
        Ok(plan)
    }
}

#[tonic::async_trait]
impl pb::runs_server::Runs for RunsService {
    async fn create_run(&self, request: Request<pb::CreateRunRequest>) -> Result<Response<pb::Run>, Status> {
        let request = request.into_inner();
        let plan = self.plan(&request)?;
        let lease_timeout = match request.lease_timeout_ms {
            0 => DEFAULT_LEASE_TIMEOUT,
            ms if ms > 7 * 24 * 3_600_000 => return Err(Error::invalid("lease_timeout_ms", "at most 7 days").into()),
            ms => Duration::from_millis(ms),
        };
        let description = request.description;
        let stored_plan = plan.clone();
        let summary = self
            .host()
            .blocking(move |store| {
                let run = store.host_run(&stored_plan, &description, lease_timeout)?;
                store.summary(&run)
            })
            .await?;
        let queue = Queue::fresh(summary, plan, lease_timeout);
        let reply = queue.progress();
        tracing::info!(run = %queue.run, planned = queue.plan.len(), "run created");
        self.host().insert(Arc::new(queue));
        Ok(Response::new(reply))
    }

    async fn get_run(&self, request: Request<pb::GetRunRequest>) -> Result<Response<pb::Run>, Status> {
        let run_id = request.into_inner().run_id;
        // Replicas: the shared store's counts, not this server's view.
        let queue = match self.env.replica() {
            Some(_) => Err(Error::RunNotHosted(run_id.clone())),
            None => self.host().queue(&run_id).await,
        };
        match queue {
            Ok(queue) => Ok(Response::new(queue.progress())),
            // A run the command-line tool played: as stored.
            Err(Error::RunNotHosted(_)) => {
                let (summary, agents, task_ids) = self
                    .host()
                    .blocking(move |store| {
                        let run = store.find_run(&run_id)?;
                        Ok((store.summary(&run)?, store.agents(&run)?, store.task_ids(&run)?))
                    })
                    .await?;
                let run = run_message(&summary, summary.pending(), 0, agents);
                Ok(Response::new(with_suite(run, task_ids.iter().map(String::as_str))))
            }
            Err(error) => Err(error.into()),
        }
    }

    async fn list_runs(&self, _: Request<pb::ListRunsRequest>) -> Result<Response<pb::ListRunsResponse>, Status> {
        let stored = self
            .host()
            .blocking(|store| {
                let runs = store.runs()?.into_iter();
                runs.map(|summary| Ok((store.agents(&summary.id)?, store.task_ids(&summary.id)?, summary))).collect::<Result<Vec<_>, _>>()
            })
            .await?;
        let runs = stored
            .into_iter()
            .map(|(agents, task_ids, summary)| match self.host().loaded(summary.id.as_str()) {
                // Loaded: the live counts, leases included.
                Some(queue) => queue.progress(),
                None => with_suite(run_message(&summary, summary.pending(), 0, agents), task_ids.iter().map(String::as_str)),
            })
            .collect();
        Ok(Response::new(pb::ListRunsResponse { runs }))
    }

    async fn next_episode(&self, request: Request<pb::NextEpisodeRequest>) -> Result<Response<pb::NextEpisodeResponse>, Status> {
        let request = request.into_inner();
        limits::text("agent", &request.agent, limits::MAX_NAME_BYTES)?;
        limits::text("worker", &request.worker, limits::MAX_NAME_BYTES)?;
        limits::text("role", &request.role, limits::MAX_NAME_BYTES)?;
        limits::list("team_roles", &request.team_roles, limits::MAX_NAME_BYTES)?;
        let queue = self.host().queue(&request.run_id).await?;
        // A team that cannot play the run's episodes is refused before it holds a lease.
        let declared =
            || queue.plan.first().map(|p| p.request.roles.iter().map(|r| r.name.as_str()).collect::<Vec<_>>()).unwrap_or_default();
        if let Some(missing) = request.team_roles.iter().find(|role| !declared().contains(&role.as_str())) {
            let message = format!(
                "the episodes of {} declare the roles [{}], not '{missing}', which this worker's agent plays: nothing was leased; \
                 host the run with --roles {} (or work on it with an agent of its roles)",
                request.run_id,
                declared().join(", "),
                request.team_roles.join(",")
            );
            return Err(Status::failed_precondition(message));
        }
        // Replicas on a shared store claim plan entries in the database.
        if let (Some(replica), true) = (self.env.replica(), request.role.is_empty()) {
            return Ok(Response::new(replica.next_episode(&self.env, &queue, &request.agent, &request.worker).await?));
        }
        let registry = self.env.registry();
        if !request.role.is_empty() {
            let planned_roles =
                queue.plan.first().map(|p| p.request.roles.iter().map(|r| r.name.as_str()).collect::<Vec<_>>()).unwrap_or_default();
            if !planned_roles.contains(&request.role.as_str()) {
                let message = format!("the run's episodes declare the roles [{}]; '{}' is not one", planned_roles.join(", "), request.role);
                return Err(Error::invalid("role", message).into());
            }
            // A leased episode still missing this role first: one episode, several workers.
            loop {
                let lead = planned_roles.first() == Some(&request.role.as_str());
                let (index, episode_id) = match queue.open_for_role(&request.agent, &request.role) {
                    Ok(Some(open)) => open,
                    // The first role opens episodes; the others only join them.
                    Ok(None) if lead => break,
                    Ok(None) => {
                        let run = queue.progress();
                        let retry_after_ms = if run.complete || run.waiting + run.leased == 0 { 0 } else { 20 };
                        return Ok(Response::new(pb::NextEpisodeResponse { lease: None, run: Some(run), retry_after_ms }));
                    }
                    // Another worker is creating an episode this role can join: ask again in a moment.
                    Err(()) => {
                        return Ok(Response::new(pb::NextEpisodeResponse { lease: None, run: Some(queue.progress()), retry_after_ms: 20 }));
                    }
                };
                let shared = registry.with_live(&episode_id, |session| match session.episode.verdict() {
                    Some(_) => Err(Error::EpisodeFinished),
                    None => Ok(crate::team::episode_message(&episode_id, session)),
                });
                // Finished or expired meanwhile: look further.
                let Ok(episode) = shared else { continue };
                tracing::debug!(run = %queue.run, index, worker = %request.worker, role = %request.role, %episode_id, "episode shared");
                let lease = pb::Lease {
                    episode: Some(episode),
                    plan_index: index as u64,
                    agent: queue.plan[index].agent.clone(),
                    lease_timeout_ms: queue.lease_timeout.as_millis() as u64,
                };
                return Ok(Response::new(pb::NextEpisodeResponse { lease: Some(lease), run: Some(queue.progress()), retry_after_ms: 0 }));
            }
        }
        // Long poll: while every remaining episode is leased, wait for one to
        // be recorded or freed, or for the soonest lease to expire.
        let deadline = tokio::time::Instant::now() + LONG_POLL;
        let index = loop {
            let changed = queue.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            match queue.pick(&request.agent, registry) {
                Pick::Slot(index) => {
                    queue.hand_out(index, &request.role);
                    break index;
                }
                Pick::Busy(left) if tokio::time::Instant::now() < deadline => {
                    let _ = tokio::time::timeout_at(deadline.min(tokio::time::Instant::now() + left), changed).await;
                }
                pick => {
                    // Nothing left (0), or ask again soon, not in a tight loop.
                    let retry_after_ms = match pick {
                        Pick::Busy(left) => left.clamp(Duration::from_millis(50), Duration::from_secs(1)).as_millis() as u64,
                        _ => 0,
                    };
                    return Ok(Response::new(pb::NextEpisodeResponse { lease: None, run: Some(queue.progress()), retry_after_ms }));
                }
            }
        };
        let planned = &queue.plan[index];
        let tag = LeaseTag { queue: queue.clone(), index };
        let episode = match self.env.open_episode(planned.request.clone(), Some(tag)) {
            Ok(episode) => episode,
            Err(error) => {
                queue.free(index, None);
                return Err(error.into());
            }
        };
        let run = queue.leased(index, &episode.episode_id);
        tracing::debug!(run = %queue.run, index, worker = %request.worker, episode_id = %episode.episode_id, "episode leased");
        let lease = pb::Lease {
            episode: Some(episode),
            plan_index: index as u64,
            agent: planned.agent.clone(),
            lease_timeout_ms: queue.lease_timeout.as_millis() as u64,
        };
        Ok(Response::new(pb::NextEpisodeResponse { lease: Some(lease), run: Some(run), retry_after_ms: 0 }))
    }

    async fn get_run_report(&self, request: Request<pb::GetRunReportRequest>) -> Result<Response<pb::RunReport>, Status> {
        let pb::GetRunReportRequest { run_id, exclude_infra_errors, feasible_only } = request.into_inner();
        limits::id("run_id", &run_id)?;
        let conv = InfraConvention::excluding(exclude_infra_errors);
        let population = Population::feasible_only(feasible_only);
        let (summary, agents, results, k, task_ids) = self
            .host()
            .blocking(move |store| {
                let run = store.find_run(&run_id)?;
                let k = trials_of(&store.plan(&run)?);
                Ok((store.summary(&run)?, store.agents(&run)?, store.results(&run)?, k, store.task_ids(&run)?))
            })
            .await?;
        let metrics_error = |e: toolenv_runs::metrics::MetricsError| Error::Store(format!("computing the report: {e}"));
        // One computation: the text is printed from the figures the JSON carries.
        let figures = report::summary(&results, k, summary.planned, conv, population).map_err(metrics_error)?;
        let text = report::render_summary(&figures);
        let summary_json = serde_json::json!({"run": summary, "report": figures}).to_string();
        let run = match self.host().loaded(summary.id.as_str()) {
            Some(queue) => queue.progress(),
            None => with_suite(run_message(&summary, summary.pending(), 0, agents), task_ids.iter().map(String::as_str)),
        };
        Ok(Response::new(pb::RunReport { run: Some(run), text, summary_json }))
    }

    async fn compare_runs(&self, request: Request<pb::CompareRunsRequest>) -> Result<Response<pb::RunComparison>, Status> {
        let pb::CompareRunsRequest { run_a, run_b, agents, exclude_infra_errors } = request.into_inner();
        limits::id("run_a", &run_a)?;
        limits::text("run_b", &run_b, limits::MAX_ID_BYTES)?;
        limits::list("agents", &agents, limits::MAX_NAME_BYTES)?;
        let run_b = Some(run_b).filter(|b| !b.is_empty());
        let read = move |store: &AnyStore| {
            let mut sides = Vec::new();
            for id in std::iter::once(run_a).chain(run_b) {
                let run = store.find_run(&id)?;
                sides.push((run.as_str().to_owned(), store.agents(&run)?, store.results(&run)?));
            }
            Ok(sides)
        };
        let sides = self.host().blocking(read).await?;
        // A run against itself differs in nothing: refused rather than shown as a zero difference.
        if sides.get(1).is_some_and(|b| b.0 == sides[0].0) {
            let message = format!("names run_a's run {}: give another run, or run_a alone with two agents", sides[0].0);
            return Err(Error::invalid("run_b", message).into());
        }
        let invalid = |error: compare::CompareError| {
            let field = match error {
                compare::CompareError::UnknownAgent { .. } | compare::CompareError::Agents(_) => "agents",
                compare::CompareError::GridMismatch { .. } | compare::CompareError::NoSharedTasks { .. } => "run_b",
                compare::CompareError::Metrics(_) => "run_a",
            };
            Error::invalid(field, error.to_string())
        };
        let (a, b) = (&sides[0], sides.get(1));
        let (first, second) = compare::select_agents((&a.0, &a.1), b.map(|b| (b.0.as_str(), b.1.as_slice())), &agents).map_err(invalid)?;
        let episodes_a = compare::episodes_of(&a.2, &first.agent);
        let episodes_b = compare::episodes_of(&b.unwrap_or(a).2, &second.agent);
        let comparison = compare::compare((first, &episodes_a), (second, &episodes_b), InfraConvention::excluding(exclude_infra_errors))
            .map_err(invalid)?;
        let comparison_json = serde_json::to_string(&comparison).map_err(|e| Error::Store(format!("writing the comparison: {e}")))?;
        Ok(Response::new(pb::RunComparison { text: compare::render(&comparison), comparison_json }))
    }
}
