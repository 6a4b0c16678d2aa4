//! The `toolenv.v1.ToolEnv` service: thin handlers that validate, convert,
//! call the episode and convert back. Every decision is the domain's.

mod stream;

use std::sync::Arc;

use tonic::{Request, Response, Status};
use toolenv::pb;
use toolenv_core::{CallOptions, Domain, Episode, TaskRef, phrasing::Level};
use toolenv_domains::{
    Finish,
    generate::{Suite, SuiteError},
    perturb::perturb,
};

use crate::{
    Config,
    error::Error,
    fault, limits,
    metrics::{CallLabels, Metrics},
    registry::{Registry, Session},
    replica::{PlayedCopy, Replica, Synced},
    runs::{LeaseTag, RunHost},
};

/// The service implementation, cheap to clone.
#[derive(Debug, Clone)]
pub struct ToolEnvService {
    registry: Arc<Registry>,
    config: Arc<Config>,
    runs: Arc<RunHost>,
    /// Prometheus metrics, when the server exposes them.
    metrics: Option<Arc<Metrics>>,
    /// The durable episode log, when replicas share a PostgreSQL store.
    replica: Option<Arc<Replica>>,
}

impl ToolEnvService {
    pub(crate) fn new(config: Config, store: toolenv_store::AnyStore) -> Self {
        let replica = store.postgres().map(|store| Arc::new(Replica::new(store.clone(), config.durability)));
        let (registry, runs) = (Arc::new(Registry::new(config.max_episodes)), Arc::new(RunHost::new(store)));
        let rebuilt = replica.as_ref().map(|replica| replica.rebuilt.clone());
        let metrics = config.metrics_addr.map(|_| Arc::new(Metrics::new(registry.clone(), runs.clone(), rebuilt)));
        Self { registry, config: Arc::new(config), runs, metrics, replica }
    }

    pub(crate) fn replica(&self) -> Option<&Arc<Replica>> {
        self.replica.as_ref()
    }

    /// With replicas: an episode this server does not hold, rebuilt from the log.
    async fn held(&self, id: &str) -> Result<(), Error> {
        match &self.replica {
            Some(replica) => replica.ensure(&self.registry, &self.runs, id, &self.config).await,
            None => Ok(()),
        }
    }

    /// The answer judge's ruling on a prose answer the episode is about to
    /// finish with; `None` when there is nothing to rule on (see
    /// [`toolenv_core::Episode::judge_question`]) or the episode is finished.
    async fn rule(&self, judge: &dyn crate::AnswerJudge, id: &str, answer: &str) -> Result<Option<toolenv_core::AnswerRuling>, Error> {
        let question = match self.registry.with_live(id, |session| Ok(session.episode.judge_question(answer))) {
            Ok(question) => question,
            // Finishing again answers with the recorded verdict.
            Err(Error::EpisodeFinished) => None,
            Err(error) => return Err(error),
        };
        let Some(question) = question else { return Ok(None) };
        let ruling = judge.rule(&question).await.map_err(Error::JudgeUnavailable)?;
        tracing::debug!(episode_id = %id, correct = ruling.correct, judge = %ruling.judge, "answer ruled");
        Ok(Some(ruling))
    }

    pub(crate) fn metrics(&self) -> Option<&Arc<Metrics>> {
        self.metrics.as_ref()
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn runs(&self) -> &RunHost {
        &self.runs
    }

    /// A page of a suite's tasks, as a ListTasks request asks: the tasks and
    /// the next page's token (empty on the last page).
    fn task_page(&self, request: &pb::ListTasksRequest) -> Result<(Vec<TaskRef>, String), Error> {
        let (suite, domain, level) = self.suite_filter(&request.suite, request.domain, request.level)?;
        let size = match request.page_size as usize {
            0 => limits::MAX_TASK_PAGE,
            size if size > limits::MAX_TASK_PAGE => {
                return Err(Error::invalid("page_size", format!("at most {} tasks per page, got {size}", limits::MAX_TASK_PAGE)));
            }
            size => size,
        };
        limits::text("page_token", &request.page_token, limits::MAX_ID_BYTES)?;
        let total = suite.count(domain, level);
        let skip = match request.page_token.as_str() {
            "" => 0,
            token => token.parse::<usize>().ok().filter(|&skip| skip <= total).ok_or_else(|| {
                Error::invalid("page_token", format!("'{}' is not a next_page_token of this listing", limits::cut(token)))
            })?,
        };
        let next = skip.saturating_add(size);
        Ok((suite.page(domain, level, skip, size), if next < total { next.to_string() } else { String::new() }))
    }

    /// A request's suite (empty: the paper's), domain (a `pb::Domain`
    /// value, 0 for all) and level (0 for all), checked.
    pub(crate) fn suite_filter(&self, suite: &str, domain: i32, level: u32) -> Result<(Suite, Option<Domain>, Option<u8>), Error> {
        let domain = limits::known_enum::<pb::Domain>("domain", domain)?.to_domain(&toolenv_domains::registry::ALL);
        limits::text("suite", suite, limits::MAX_NAME_BYTES)?;
        if level > 3 {
            return Err(Error::invalid("level", format!("levels are 1 to 3 (0 for all), got {level}")));
        }
        let suite = self.config.tasks.suite(suite).map_err(|e| Error::invalid("suite", e.to_string()))?;
        Ok((suite, domain, u8::try_from(level).ok().filter(|&l| l > 0)))
    }

    /// Creates an episode as the request says; a leased one records its
    /// result in its run when finished.
    pub(crate) fn open_episode(&self, request: pb::CreateEpisodeRequest, lease: Option<LeaseTag>) -> Result<pb::Episode, Error> {
        let task = self.task(&request.task_id)?;
        limits::roles("roles", &request.roles)?;
        limits::mas_profile("mas_faults", request.mas_faults.as_ref())?;
        let delivery: pb::FaultDelivery = limits::known_enum("fault_delivery", request.fault_delivery)?;
        if !request.epsilon.is_finite() {
            return Err(Error::invalid("epsilon", format!("must be a finite number, got {}", request.epsilon)));
        }
        let chaos = fault::chaos(request.fault_profile.as_ref(), &self.config.fault_profiles)?;
        let time_scale = toolenv_runs::check_time_scale(request.time_scale.unwrap_or(self.config.time_scale))
            .map_err(|e| Error::invalid("time_scale", e.to_string()))?;
        let level = Level::from_epsilon(request.epsilon).map_err(|e| Error::invalid("epsilon", e.to_string()))?;
        // The seed, not the trial: all k trials of a configuration read the same text.
        let perturbed = perturb(&task, level, request.seed, self.config.paraphrases.as_deref());
        let in_band = delivery == pb::FaultDelivery::InBand;
        let fault_profile_json = serde_json::to_string(chaos.profile()).unwrap_or_default();
        let mas = request
            .mas_faults
            .as_ref()
            .map(pb::MasFaultProfile::to_domain)
            .transpose()
            .map_err(|e| Error::invalid("mas_faults", e.to_string()))?;
        let roles = request.roles.iter().map(pb::Role::to_domain).collect();
        let episode = Episode::new(&task, request.seed, request.trial)
            .with_max_calls(self.config.max_calls_per_episode)
            .with_chaos(chaos)
            .with_perturbation(level, perturbed)
            .with_team(roles, mas)
            .map_err(|e| match e {
                toolenv_core::TeamError::Roles(why) => Error::invalid("roles", why),
                toolenv_core::TeamError::Profile(why) => Error::invalid("mas_faults", why.to_string()),
            })?;
        let reply = pb::Episode {
            episode_id: String::new(),
            task_id: task.id.clone(),
            description: episode.description().to_owned(),
            tools: crate::team::tools(&episode),
            roles: episode.roles().iter().map(Into::into).collect(),
            today: task.today.to_string(),
            max_calls: episode.max_calls(),
            fault_profile_json,
            time_scale,
            answer_schema_json: toolenv::answer_schema_json(&task),
        };
        let episode_id = self.registry.insert(Session::new(episode, in_band, time_scale, lease))?;
        tracing::debug!(%episode_id, task_id = %task.id, seed = request.seed, trial = request.trial, "episode created");
        if let Some(metrics) = &self.metrics {
            metrics.episode_created(task.domain.name());
        }
        Ok(pb::Episode { episode_id, ..reply })
    }

    /// A task by id: the paper's, a task file's, or a generated one rebuilt from its id.
    fn task(&self, id: &str) -> Result<TaskRef, Error> {
        let id = limits::id("task_id", id)?;
        self.config.tasks.resolve(id).map_err(|error| match error {
            // A generated id of another generator version, or a task file's not loaded here: said as such.
            SuiteError::Version { .. } | SuiteError::NoTaskFile(_) => Error::invalid("task_id", error.to_string()),
            SuiteError::UnknownTask(_) | SuiteError::UnknownSuite(_) => Error::UnknownTask(id.to_owned()),
        })
    }
}

fn episode_id(id: &str) -> Result<&str, Error> {
    limits::id("episode_id", id)
}

#[tonic::async_trait]
impl pb::tool_env_server::ToolEnv for ToolEnvService {
    type CallToolsStream = stream::CallToolsStream;

    async fn call_tools(
        &self,
        request: Request<tonic::Streaming<pb::CallToolsRequest>>,
    ) -> Result<Response<Self::CallToolsStream>, Status> {
        Ok(Response::new(stream::serve(self.clone(), request.into_inner())))
    }

    async fn list_tasks(&self, request: Request<pb::ListTasksRequest>) -> Result<Response<pb::ListTasksResponse>, Status> {
        let request = request.into_inner();
        let (tasks, next_page_token) = self.task_page(&request)?;
        Ok(Response::new(pb::ListTasksResponse { tasks: tasks.iter().map(|t| pb::TaskSummary::from(&**t)).collect(), next_page_token }))
    }

    async fn get_task(&self, request: Request<pb::GetTaskRequest>) -> Result<Response<pb::Task>, Status> {
        let task = self.task(&request.get_ref().task_id)?;
        Ok(Response::new((&*task).into()))
    }

    async fn create_episode(&self, request: Request<pb::CreateEpisodeRequest>) -> Result<Response<pb::Episode>, Status> {
        let episode = self.open_episode(request.into_inner(), None)?;
        if let Some(replica) = &self.replica {
            replica.created(&self.registry, &episode.episode_id).await?;
        }
        Ok(Response::new(episode))
    }

    async fn call_tool(&self, request: Request<pb::CallToolRequest>) -> Result<Response<pb::CallToolResponse>, Status> {
        let request = request.into_inner();
        let id = episode_id(&request.episode_id)?;
        if request.tool_name.is_empty() {
            return Err(Error::MissingField("tool_name").into());
        }
        limits::text("tool_name", &request.tool_name, limits::MAX_NAME_BYTES)?;
        limits::text("idempotency_key", &request.idempotency_key, limits::MAX_KEY_BYTES)?;
        limits::text("agent_id", &request.agent_id, limits::MAX_ID_BYTES)?;
        if request.arguments_json.len() > self.config.max_argument_bytes {
            let message = format!("arguments are larger than {} bytes", self.config.max_argument_bytes);
            return Err(Error::invalid("arguments_json", message).into());
        }
        let key = Some(request.idempotency_key.as_str()).filter(|k| !k.is_empty());
        if self.replica.is_some() {
            self.held(id).await?;
        }
        // The clock is read for the latency metric only when there are metrics.
        let started = self.metrics.as_ref().map(|_| std::time::Instant::now());
        // Each answer says the episode's next index (with the call's result or
        // its refusal), so a client sending expected_index keeps count.
        let play = |session: &mut Session, now| {
            let answer = (|| {
                if let Some(outgoing) = request.expected_index.map(|i| session.replayed(i, &request.tool_name)).transpose()?.flatten() {
                    return Ok((outgoing, None));
                }
                let agent = Some(request.agent_id.as_str()).filter(|a| !a.is_empty());
                let declared =
                    CallOptions { agent, idempotency_key: key, waited_ms: request.waited_ms, user_answer: request.user_answer.as_deref() };
                let outgoing = session.call_as(now, &request.tool_name, &request.arguments_json, declared)?;
                let labels = self.metrics.as_ref().map(|_| CallLabels::of(session, &outgoing));
                Ok((outgoing, labels))
            })();
            Ok((answer.map_err(|error: Error| (error, session.next_index())), PlayedCopy::on(session)))
        };
        let mut called = self.registry.with_live_at(id, play);
        // With replicas, the call is in the durable log before its reply goes;
        // a stale copy (behind the log: its append conflicts, or the call's
        // index is ahead of it) is rebuilt from the log and plays the call again.
        if let Some(replica) = &self.replica
            && let Ok((answer, played)) = &called
        {
            let behind = matches!(answer, Err((Error::IndexAhead { .. }, _))) && replica.drop_if_stale(&self.registry, id).await?;
            if behind || replica.sync(&self.registry, id, played).await? == Synced::Stale {
                self.held(id).await?;
                called = self.registry.with_live_at(id, play);
                if let Ok((_, played)) = &called {
                    replica.sync(&self.registry, id, played).await?;
                }
            }
        }
        let (outgoing, labels) = match called.map(|(answer, _)| answer) {
            Ok(Ok(called)) => called,
            Ok(Err((error, next))) => {
                let status = with_next_index(Status::from(error), next);
                if let Some(metrics) = &self.metrics {
                    metrics.refused(status.code());
                }
                return Err(status);
            }
            Err(error) => {
                let status = Status::from(error);
                if let Some(metrics) = &self.metrics {
                    metrics.refused(status.code());
                }
                return Err(status);
            }
        };
        // The simulated delay, for real, with no lock held.
        if !outgoing.delay.is_zero() {
            tokio::time::sleep(outgoing.delay).await;
        }
        if let (Some(metrics), Some(labels), Some(started)) = (&self.metrics, &labels, started) {
            metrics.call(labels, started.elapsed());
        }
        let next = outgoing.index + 1;
        Ok(Response::new(outgoing.into_response().map_err(|status| with_next_index(status, next))?))
    }

    async fn finish_episode(&self, request: Request<pb::FinishEpisodeRequest>) -> Result<Response<pb::Verdict>, Status> {
        let mut request = request.into_inner();
        let id = episode_id(&request.episode_id)?;
        if let Some(cost) = request.usage.as_ref().and_then(|u| u.cost_usd) {
            limits::figure("usage.cost_usd", cost)?;
        }
        if let Some(answer) = &request.answer {
            limits::text("answer", answer, limits::MAX_ANSWER_BYTES)?;
        }
        let typed = match &request.answer_json {
            Some(text) => {
                limits::text("answer_json", text, limits::MAX_ANSWER_BYTES)?;
                let value: serde_json::Value =
                    serde_json::from_str(text).map_err(|e| Error::invalid("answer_json", format!("not JSON: {e}")))?;
                if !value.is_object() {
                    return Err(
                        Error::invalid("answer_json", "a typed answer is a JSON object of the fields answer_schema_json names").into()
                    );
                }
                Some(value)
            }
            None => None,
        };
        // With replicas, a copy here behind the log (another replica played
        // the episode further) is found when its finish is logged.
        if let Some(replica) = &self.replica {
            self.held(id).await?;
            replica.seal_leased(&self.registry, id).await?;
        }
        let ruling = match (&self.config.answer_judge, &request.answer, &typed) {
            (Some(judge), Some(answer), None) => self.rule(judge.as_ref(), id, answer).await?,
            _ => None,
        };
        // With replicas, a finish judged on a copy another replica had played
        // further is not logged: the copy is rebuilt from the log and judged
        // again, once; so is a finish whose copy was dropped while it waited.
        let mut rebuilt = false;
        let (verdict, lease, trajectory, first) = loop {
            let logged = match &self.replica {
                Some(_) => Replica::hold_log(&self.registry, id).await,
                None => None,
            };
            let finished = self.registry.finish(id, |session| {
                let first = session.episode.verdict().is_none().then(|| session.episode.task().domain.name());
                if first.is_some() {
                    session.usage = request.usage.take();
                    session.conversation = request.conversation.take();
                }
                if let Some(typed) = typed.clone() {
                    session.episode.answer_typed(typed);
                }
                if let Some(answer) = &request.answer {
                    session.episode.answer(answer.as_str());
                }
                if let Some(ruling) = ruling.clone() {
                    session.episode.rule_answer(ruling);
                }
                let verdict = pb::Verdict::from(session.episode.finish_with_feasibility());
                // A leased episode is recorded in its run once, at its first finish.
                Ok((verdict, session.lease.take(), first))
            });
            let (verdict, lease, first, trajectory) = match finished {
                Ok(((verdict, lease, first), trajectory)) => (verdict, lease, first, trajectory),
                // The copy was dropped while this finish waited (a call's
                // append failed).
                Err(Error::UnknownEpisode(_)) if self.replica.is_some() && !rebuilt => {
                    rebuilt = true;
                    self.held(id).await?;
                    continue;
                }
                // Finished before: the same verdict again, from what it keeps,
                // recorded in its run (and logged) now if the first finish could not be.
                Err(Error::EpisodeFinished) => {
                    let unknown = || Error::UnknownEpisode(id.to_owned());
                    let mut trajectory = self.registry.finished(id).ok_or_else(unknown)?;
                    if let Some(replica) = &self.replica {
                        trajectory =
                            replica.finish(&self.registry, id, trajectory, None).await?.ok_or_else(|| finished_on_a_stale_copy(id))?;
                    }
                    let verdict = trajectory.verdict.clone().ok_or_else(unknown)?;
                    self.runs.record_again(id, trajectory).await?;
                    return Ok(Response::new(verdict));
                }
                Err(error) => return Err(error.into()),
            };
            // With replicas, the finish is in the log before its verdict goes;
            // a finish logged before stands. One the log missed is UNAVAILABLE
            // (recorded in its run all the same, or kept for the repeat), and
            // its repeat logs it.
            let (Some(replica), Some(finished)) = (&self.replica, &trajectory) else { break (verdict, lease, trajectory, first) };
            match replica.finish(&self.registry, id, finished.clone(), logged).await {
                Ok(Some(stands)) => break (stands.verdict.clone().unwrap_or(verdict), lease, Some(stands), first),
                Ok(None) if !rebuilt => {
                    rebuilt = true;
                    (request.usage, request.conversation) = (finished.usage, finished.conversation.clone());
                    self.held(id).await?;
                }
                Ok(None) => return Err(finished_on_a_stale_copy(id).into()),
                Err(error) => {
                    if let (Some(lease), Some(finished)) = (lease, trajectory) {
                        let _ = self.runs.record(lease, id, finished).await;
                    }
                    return Err(error.into());
                }
            }
        };
        if let (Some(metrics), Some(domain)) = (&self.metrics, first) {
            metrics.episode_finished(domain, verdict.passed);
        }
        tracing::debug!(episode_id = %id, passed = verdict.passed, "episode finished");
        if let (Some(lease), Some(trajectory)) = (lease, trajectory) {
            self.runs.record(lease, id, trajectory).await?;
        }
        Ok(Response::new(verdict))
    }

    async fn join_episode(&self, request: Request<pb::JoinEpisodeRequest>) -> Result<Response<pb::JoinEpisodeResponse>, Status> {
        let request = request.into_inner();
        let id = episode_id(&request.episode_id)?;
        if request.role.is_empty() {
            return Err(Error::MissingField("role").into());
        }
        limits::text("role", &request.role, limits::MAX_NAME_BYTES)?;
        self.held(id).await?;
        let (reply, played) =
            self.registry.with_live(id, |session| Ok((crate::team::join(session, &request.role), PlayedCopy::on(session))))?;
        if let Some(replica) = &self.replica {
            replica.sync(&self.registry, id, &played).await?;
        }
        let reply = reply?;
        tracing::debug!(episode_id = %id, agent_id = %reply.agent_id, "agent joined");
        Ok(Response::new(reply))
    }

    async fn get_trajectory(&self, request: Request<pb::GetTrajectoryRequest>) -> Result<Response<pb::Trajectory>, Status> {
        let id = episode_id(&request.get_ref().episode_id)?;
        if let Some(replica) = &self.replica {
            replica.drop_if_stale(&self.registry, id).await?;
            self.held(id).await?;
        }
        let trajectory = self.registry.trajectory(id)?;
        Ok(Response::new(trajectory))
    }

    async fn fork_episode(&self, request: Request<pb::ForkEpisodeRequest>) -> Result<Response<pb::Episode>, Status> {
        let request = request.into_inner();
        if !request.episode_id.is_empty() {
            self.held(episode_id(&request.episode_id)?).await?;
        }
        let episode = self.fork_episode(request)?;
        if let Some(replica) = &self.replica {
            replica.created(&self.registry, &episode.episode_id).await?;
        }
        Ok(Response::new(episode))
    }
}

/// A refused or failed call's status, saying the episode's next index.
fn with_next_index(mut status: Status, next: u32) -> Status {
    status.metadata_mut().insert(toolenv::NEXT_INDEX_KEY, next.into());
    status
}

/// A finish judged on a copy another replica had played further: not
/// logged, and to be sent again.
fn finished_on_a_stale_copy(id: &str) -> Error {
    Error::Unavailable(format!(
        "episode {id}: another replica played the episode further while this finish was judged, so it was not logged; \
         send it again"
    ))
}
