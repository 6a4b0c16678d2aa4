//! The `toolenv` command line, from low to high: [`args`] (what clap
//! parses) → [`plan`] (validated plans) → the commands: [`run`](mod@run) (play a
//! grid; a single configuration is a grid of one), [`hosted`] (runs on a
//! server for workers), [`store`] (stored runs), [`serve`], [`selfcheck`];
//! [`render`] prints for all of them.

pub(crate) mod args;
mod attribute;
mod chaos;
mod compare;
mod filter;
mod grid_args;
pub(crate) mod help;
mod hosted;
mod html;
mod llm;
mod mcp;
mod otlp;
mod plan;
mod render;
mod run;
mod selfcheck;
mod serve;
mod signal;
mod site;
mod store;
mod values;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use toolenv_client::Client;
use toolenv_domains::taskfile::Catalogue;
use toolenv_runs::metrics::Population;
use toolenv_server::{Config, RunningServer};

use args::{ClientCommand, Command, TasksCommand};
use plan::Server;

/// How `--url` commands authenticate (`--token`, `--ca-cert`), set once.
static CREDENTIALS: std::sync::OnceLock<toolenv_client::Credentials> = std::sync::OnceLock::new();

/// Connects to a server with the command line's credentials.
pub(crate) async fn connect(url: &str) -> Result<Client, toolenv_client::ClientError> {
    Client::connect_with(url, CREDENTIALS.get().unwrap_or(&toolenv_client::Credentials::default())).await
}

/// Runs a parsed command line to its exit code.
pub(crate) async fn run(cli: args::Cli) -> anyhow::Result<ExitCode> {
    let credentials = toolenv_client::Credentials {
        token: cli.token.clone(),
        ca_pem: match &cli.ca_cert {
            Some(path) => Some(std::fs::read(path).with_context(|| format!("reading --ca-cert {}", path.display()))?),
            None => None,
        },
    };
    let _ = CREDENTIALS.set(credentials);
    let url = cli.url;
    match cli.command {
        Command::Serve(args) => serve::serve(args, cli.token, cli.log_format == args::LogFormat::Json).await,
        Command::Selfcheck(args) => {
            let code = selfcheck::selfcheck(&args);
            match args.judge.judge()? {
                Some(judge) => {
                    let judged = selfcheck::measure_judge(&args, &*judge).await?;
                    Ok(if code == ExitCode::SUCCESS { judged } else { code })
                }
                None => Ok(code),
            }
        }
        Command::Runs { store } => match &url {
            Some(url) => hosted::list_runs(&mut connect(url).await?).await,
            None => store::list_runs(&store.store),
        },
        Command::Report { chaos_ledger, verdicts, json, html, .. } if !chaos_ledger.is_empty() => {
            chaos::report(&chaos_ledger, verdicts.as_deref(), json, html.as_deref())
        }
        Command::Report { run, other, infra, feasible_only, html: Some(file), replay, .. } => {
            if url.is_some() {
                anyhow::bail!("--html reads the store of runs: for a hosted run, pass the server's --store file instead of --url");
            }
            let conv = infra.convention();
            let runs: Vec<String> = std::iter::once(run).chain(other).collect();
            html::report(&replay.store.store, &runs, &file, conv, Population::feasible_only(feasible_only))
        }
        Command::Report { run, json, infra, feasible_only, replay, .. } => match &url {
            Some(url) => hosted::report(&mut connect(url).await?, &run, json, infra.exclude_infra_errors, feasible_only).await,
            None => store::report(&replay, &run, json, infra.convention(), Population::feasible_only(feasible_only)),
        },
        Command::Export { run, format, store } => store::export(&store.store, &run, format),
        Command::CopyStore { to, store } => store::copy(&store.store, &to),
        Command::Site(args) => site::site(&args),
        Command::Compare(args) => {
            let request = compare::CompareRequest {
                run_a: &args.run_a,
                run_b: args.run_b.as_deref(),
                agents: &args.agents,
                json: args.json,
                convention: args.infra.convention(),
            };
            match &url {
                Some(url) => hosted::compare(&mut connect(url).await?, &request).await,
                None => compare::compare_stored(&args.store.store, &request),
            }
        }
        Command::Attribute { run, json, who_when, hypotheses, replay } => {
            attribute::attribute(&replay, &run, json, who_when.as_deref(), hypotheses.as_deref())
        }
        Command::ScoreAttribution { predictions, run, k, toolenv_types, json, replay } => {
            attribute::score(&replay, &run, &predictions, k, toolenv_types, json)
        }
        Command::Client(ClientCommand::Host(args)) => {
            let url = needs_server(url.as_deref())?;
            let request = plan::host(&args)?;
            hosted::host(&mut connect(url).await?, request, args.no_wait).await
        }
        Command::Client(ClientCommand::Work { run, agent, label, workers, think_ms, tasks, llm, user }) => {
            let mut agent = llm::agents([agent.0.as_str()], &llm, &user)?
                .agent(&agent.0)
                .with_context(|| format!("--agent {}: not an agent", agent.0))?;
            if think_ms > 0 {
                agent = std::sync::Arc::new(toolenv_agents::Paced::new(agent, std::time::Duration::from_millis(think_ms)));
            }
            let mut client = connect(needs_server(url.as_deref())?).await?.with_tasks(filter::catalogue(&tasks)?);
            hosted::work(&mut client, &run, agent, label, workers).await
        }
        Command::Client(ClientCommand::Tasks { command: Some(TasksCommand::Export { filter }), .. }) => {
            let tasks = plan::Tasks::from(&filter);
            // A conversational variant's withheld slots and user actions have no place in the format yet.
            anyhow::ensure!(!tasks.suite.conversational(), "task files cannot hold conversational tasks yet: export their tasks in full");
            let tasks = tasks.suite.tasks(tasks.domain, tasks.level);
            let file = toolenv_domains::taskfile::export(tasks.iter().map(|t| &**t));
            println!("{}", serde_json::to_string_pretty(&file)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Client(ClientCommand::Tasks { command: Some(TasksCommand::Show { task_id }), .. }) => {
            let mut session = Session::open(url, Catalogue::new()).await?;
            let task = session.client.get_task(&task_id).await;
            session.close(task.map(|task| render::task(&task))).await
        }
        Command::Client(ClientCommand::Tasks { filter, .. }) => {
            let tasks = plan::Tasks::from(&filter);
            let mut session = Session::open(url, filter.catalogue()?).await?;
            let listed = session.client.list_suite_tasks(&tasks.suite.to_string(), tasks.domain, tasks.level).await;
            session.close(listed.map(|listed| render::tasks(&listed))).await
        }
        Command::Client(ClientCommand::Play { task_id, play, json }) => {
            let builtin = toolenv_agents::Builtin::from(play.agent);
            let request = plan::episode(&play.episode, builtin.name(), &task_id, Server::of(url.as_deref()))?;
            let agent = llm::agents([], &play.llm, &play.user)?.agent(builtin.name()).context("a built-in agent")?;
            let mut session = Session::open(url, filter::catalogue(play.tasks.as_slice())?).await?;
            let played = toolenv_client::play(&mut session.client, agent, request).await;
            session
                .close(played.map(|outcome| match json {
                    true => println!("{}", toolenv_runs::trajectory_json(&outcome.trajectory)),
                    false => render::trajectory(&outcome.trajectory),
                }))
                .await
        }
        Command::Client(ClientCommand::Run(args)) => {
            let plan = plan::run(&args, Server::of(url.as_deref()))?;
            let judge = args.judge.judge()?;
            anyhow::ensure!(
                judge.is_none() || url.is_none(),
                "--answer-judge: the server judges answers; start it with `toolenv serve --answer-judge llm …` instead"
            );
            let mut session = Session::open_judged(url, args.filter.catalogue()?, judge).await?;
            let code = run::run(&mut session.client, plan).await;
            session.close(code).await
        }
        Command::Mcp(args) => mcp::mcp(args, url).await,
        Command::Chaos(args) => chaos::chaos(args).await,
        Command::ChaosRun(args) => chaos::chaos_run(args),
        Command::ChaosConnect { url } => {
            toolenv_mcp::chaos::connect(&url, tokio::io::stdin(), tokio::io::stdout()).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The --url of a command that only a long-lived server can serve.
fn needs_server(url: Option<&str>) -> anyhow::Result<&str> {
    url.context("hosted runs live on a server: start one with `toolenv serve` and pass its address with --url (or TOOLENV_URL)")
}

/// A client of the server at --url, or of an embedded one started for the command.
struct Session {
    client: Client,
    embedded: Option<RunningServer>,
}

impl Session {
    /// A session whose client (and embedded server) find `tasks`' task files.
    async fn open(url: Option<String>, tasks: Catalogue) -> anyhow::Result<Session> {
        Self::open_judged(url, tasks, None).await
    }

    /// [`Session::open`], an embedded server judging prose answers with `answer_judge`.
    async fn open_judged(
        url: Option<String>,
        tasks: Catalogue,
        answer_judge: Option<Arc<dyn toolenv_server::AnswerJudge>>,
    ) -> anyhow::Result<Session> {
        let embedded = match &url {
            Some(_) => None,
            None => {
                let config = Config { answer_judge, tasks: tasks.clone(), ..Config::default() };
                Some(RunningServer::start(config).await.context("starting the embedded server")?)
            }
        };
        let url = url.or_else(|| embedded.as_ref().map(RunningServer::url)).unwrap_or_default();
        Ok(Session { client: connect(&url).await?.with_tasks(tasks), embedded })
    }

    /// Stops the embedded server, if any, after the command's `outcome`.
    async fn close<T: Into<Outcome>, E: Into<anyhow::Error>>(self, outcome: Result<T, E>) -> anyhow::Result<ExitCode> {
        if let Some(server) = self.embedded {
            server.shutdown().await?;
        }
        Ok(outcome.map_err(Into::into)?.into().0)
    }
}

/// What a command came to: an exit code (success when it had nothing to say).
struct Outcome(ExitCode);

impl From<ExitCode> for Outcome {
    fn from(code: ExitCode) -> Self {
        Outcome(code)
    }
}

impl From<()> for Outcome {
    fn from((): ()) -> Self {
        Outcome(ExitCode::SUCCESS)
    }
}

/// The command line, stored as a run's description.
fn command_line() -> String {
    std::iter::once("toolenv".to_owned()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ")
}
