//! Criterion benchmarks of the pure core (`cargo bench -p toolenv-bench`):
//! a typical read and write of each domain with and without chaos decisions
//! (JSON text in, JSON text out), and creating and finishing an episode of
//! each domain's first suite task. `toolenv-bench inprocess` prints the same
//! medians for every task in one table; these add confidence intervals.
#![forbid(unsafe_code)]

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use toolenv_bench::call_cases;
use toolenv_domains::Finish;

fn calls(c: &mut Criterion) {
    let mut group = c.benchmark_group("call");
    for case in call_cases() {
        for chaos in [false, true] {
            let prepared = case.prepared(chaos);
            let name = format!("{}/{}", case.name, if chaos { "chaos-0.2" } else { "no-chaos" });
            group.bench_function(name, |b| {
                b.iter_batched(
                    || prepared.clone(),
                    |mut episode| {
                        let text = case.call(&mut episode);
                        (episode, text)
                    },
                    BatchSize::SmallInput,
                )
            });
        }
    }
    group.finish();
}

fn episodes(c: &mut Criterion) {
    let mut group = c.benchmark_group("episode");
    for domain in toolenv_domains::registry::ALL {
        let task = toolenv_domains::suite().iter().find(|t| t.domain == domain).expect("every domain has tasks");
        let name = domain.name();
        group.bench_function(format!("{name}/create"), |b| b.iter(|| toolenv_bench::create(task, 7, false)));
        group.bench_function(format!("{name}/create-chaos-0.2"), |b| b.iter(|| toolenv_bench::create(task, 7, true)));
        let played = toolenv_bench::played(task, 7, false);
        group.bench_function(format!("{name}/finish"), |b| {
            b.iter_batched(
                || played.clone(),
                |mut episode| {
                    episode.finish();
                    episode
                },
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("{name}/create-play-finish"), |b| {
            b.iter(|| {
                let mut episode = toolenv_bench::played(task, 7, true);
                episode.finish();
                episode
            })
        });
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2)).sample_size(50)
}

criterion_group! { name = benches; config = config(); targets = calls, episodes }
criterion_main!(benches);
