//! Tests of the parent module.

use super::*;

#[test]
fn a_draw_is_the_chacha8_generators_word_at_its_position() {
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::{Rng, SeedableRng};
    for (task, seed, trial) in [("scheduling/book-meeting/001", 0, 0), ("travel/x", 7, 3), ("", u64::MAX, u32::MAX)] {
        let dice = Dice::new(task, seed, trial);
        for purpose in [Purpose::Fault, Purpose::Latency, Purpose::Partial, Purpose::Variant] {
            for call_index in (0..70).chain([199, 1000, 123_457, u32::MAX - 1, u32::MAX]) {
                let mut rng = ChaCha8Rng::from_seed(dice.key);
                rng.set_stream(purpose as u64);
                rng.set_word_pos(u128::from(call_index) * 2);
                assert_eq!(dice.draw(call_index, purpose), rng.next_u64(), "{task} call {call_index} {purpose:?}");
            }
        }
    }
}

#[test]
fn every_kind_has_a_name_that_parses_back_and_serializes_alike() {
    assert_eq!(FaultKind::ALL.len(), 11);
    for (i, kind) in FaultKind::ALL.into_iter().enumerate() {
        assert_eq!(FaultKind::parse(kind.name()), Some(kind));
        assert_eq!(kind.to_string(), kind.name());
        assert_eq!(serde_json::to_value(kind).unwrap(), serde_json::json!(kind.name()), "the wire and the ledger spell it alike");
        assert_eq!(serde_json::from_value::<FaultKind>(serde_json::json!(kind.name())).unwrap(), kind);
        assert!(FaultKind::ALL[..i].iter().all(|&earlier| earlier < kind), "ALL is in declaration order, without repeats");
    }
    assert_eq!(FaultKind::parse("transienttimeout"), None, "names are case-sensitive");
    assert_eq!(FaultKind::parse(""), None);
}

/// The behaviour table, spelled out: what docs/faults.md's fault table says
/// each kind does, by when it acts, and which kinds a retry or a later
/// check cannot get past.
#[test]
fn the_behaviour_table_gives_every_kind_its_phase_and_recoverability() {
    use FaultKind::*;
    let expected = [
        (TransientTimeout, Phase::Stops(Stop::Timeout), true),
        (HighLatency, Phase::AltersReply(Alteration::Delay), true),
        (EmptyResponse, Phase::Stops(Stop::Empty), true),
        (ConnectionReset, Phase::Stops(Stop::Reset), true),
        (SoftRateLimit, Phase::Stops(Stop::RateLimit), true),
        (HardRateLimit, Phase::Stops(Stop::Suspension), false),
        (PartialResponse, Phase::AltersReply(Alteration::Cut), true),
        (SchemaDrift, Phase::SwitchesMode(Mode::SchemaV2), false),
        (StaleData, Phase::OlderState, false),
        (CascadingFailure, Phase::Stops(Stop::Cascade), true),
        (AmbiguousCommit, Phase::AltersReply(Alteration::LoseReply), true),
    ];
    assert_eq!(expected.map(|(kind, _, _)| kind), FaultKind::ALL, "one row per kind, in order");
    for (kind, phase, recoverable) in expected {
        assert_eq!(kind.behaviour(), Behaviour { phase, recoverable }, "{kind}");
        assert_eq!((kind.phase(), kind.recoverable()), (phase, recoverable), "{kind}");
    }
    // No two kinds act alike.
    let phases: std::collections::BTreeSet<String> = FaultKind::ALL.map(|k| format!("{:?}", k.phase())).into_iter().collect();
    assert_eq!(phases.len(), FaultKind::ALL.len());
}

#[test]
fn presets_match_appendix_b() {
    let p = FaultProfile::preset("0.2").unwrap();
    assert_eq!(p.failure_rate, 0.175);
    assert_eq!(p.fault_weights[&FaultKind::SoftRateLimit], 0.25);
    for name in PRESETS {
        FaultProfile::preset(name).unwrap().validate().unwrap();
    }
    assert_eq!(FaultProfile::preset("lambda-0.3").unwrap().failure_rate, 0.275);
    let t = FaultProfile::preset("0.1").unwrap().thresholds();
    assert_eq!(t.last().unwrap().1, 75_000, "thresholds add up to the rate exactly");
    assert!(matches!(FaultProfile::preset("0.4"), Err(ProfileError::UnknownProfile(_))));
}

#[test]
fn invalid_profiles_say_what_is_wrong() {
    let w = |pairs: &[(&str, f64)]| pairs.iter().map(|&(k, v)| (k.to_owned(), v)).collect::<BTreeMap<_, _>>();
    let custom = |rate, weights: &BTreeMap<String, f64>| FaultProfile::custom(rate, weights, FaultParams::default());
    assert_eq!(custom(1.5, &w(&[("TransientTimeout", 1.0)])), Err(ProfileError::Rate(1.5)));
    assert_eq!(custom(0.1, &w(&[("TransientTimeout", 0.5)])), Err(ProfileError::WeightSum(0.5)));
    assert_eq!(custom(0.1, &w(&[("Meteor", 1.0)])), Err(ProfileError::UnknownKind("Meteor".into())));
    assert_eq!(custom(0.1, &w(&[])), Err(ProfileError::NoWeights));
    assert!(custom(f64::NAN, &w(&[])).is_err());
    assert!(custom(0.3, &w(&[("ConnectionReset", 0.5), ("HighLatency", 0.5)])).is_ok());
    let message = custom(0.1, &w(&[("Meteor", 1.0)])).unwrap_err().to_string();
    assert!(message.contains("Meteor") && message.contains("TransientTimeout"), "{message}");
}

#[test]
fn ablation_renormalizes_and_keeps_the_rate() {
    let p = FaultProfile::preset("0.2").unwrap().restricted_to(&[FaultKind::TransientTimeout, FaultKind::SoftRateLimit]).unwrap();
    assert_eq!(p.failure_rate, 0.175);
    assert_eq!(p.fault_weights.values().copied().collect::<Vec<_>>(), [0.5, 0.5]);
    assert!(FaultProfile::preset("0.1").unwrap().restricted_to(&[FaultKind::SchemaDrift]).is_err());
}

#[test]
fn draws_are_pure_functions_of_key_index_and_purpose() {
    let a = Dice::new("t", 7, 0);
    let b = Dice::new("t", 7, 0);
    assert_eq!(a.draw(5, Purpose::Fault), b.draw(5, Purpose::Fault));
    // Order of draws does not matter.
    let later = a.draw(900, Purpose::Latency);
    assert_eq!(b.draw(900, Purpose::Latency), later);
    assert_ne!(a.draw(5, Purpose::Fault), a.draw(5, Purpose::Latency));
    assert_ne!(a.draw(5, Purpose::Fault), Dice::new("t", 7, 1).draw(5, Purpose::Fault), "trials draw differently");
    assert_ne!(a.draw(5, Purpose::Fault), a.draw(6, Purpose::Fault));
}

#[test]
fn latency_is_heavy_tailed_within_bounds() {
    let chaos = Chaos::new(FaultProfile::preset("0.1").unwrap()).unwrap();
    let dice = Dice::new("t", 1, 0);
    let delays: Vec<u64> = (0..10_000).map(|i| chaos.latency_ms(&dice, i)).collect();
    assert!(delays.iter().all(|&d| (2_000..=30_000).contains(&d)));
    let median = {
        let mut d = delays.clone();
        d.sort_unstable();
        d[d.len() / 2]
    };
    // Pareto(2000, 1.5) has median 2000 · 2^(1/1.5) ≈ 3175.
    assert!((3_000..3_400).contains(&median), "median {median}");
    assert!(delays.iter().filter(|&&d| d >= 20_000).count() > 100, "a heavy tail reaches the cap");
}

/// Over 200 000 calls per preset, the empirical fault rate and the share
/// of each fault type match Appendix B within five standard deviations
/// of the binomial sampling error (fixed keys: the test is deterministic).
#[test]
fn empirical_rates_and_shares_match_the_presets() {
    const EPISODES: u32 = 2_000;
    const CALLS: u32 = 100;
    for name in ["0.1", "0.2", "0.3"] {
        let chaos = Chaos::new(FaultProfile::preset(name).unwrap()).unwrap();
        let mut counts: BTreeMap<FaultKind, u64> = BTreeMap::new();
        for episode in 0..EPISODES {
            let dice = Dice::new("travel/cheapest-flight/001", u64::from(episode), 0);
            for call in 0..CALLS {
                if let Some(kind) = chaos.draw(&dice, call) {
                    *counts.entry(kind).or_default() += 1;
                }
            }
        }
        let n = f64::from(EPISODES * CALLS);
        let faults: u64 = counts.values().sum();
        let p = chaos.profile().failure_rate;
        let rate = faults as f64 / n;
        let sigma = (p * (1.0 - p) / n).sqrt();
        assert!((rate - p).abs() < 5.0 * sigma, "λ={name}: rate {rate:.5} vs {p} (σ {sigma:.5})");
        for (&kind, &weight) in &chaos.profile().fault_weights {
            let share = *counts.get(&kind).unwrap_or(&0) as f64 / faults as f64;
            let sigma = (weight * (1.0 - weight) / faults as f64).sqrt();
            assert!((share - weight).abs() < 5.0 * sigma, "λ={name} {kind}: share {share:.4} vs {weight} (σ {sigma:.4})");
        }
        assert!(counts.keys().all(|k| chaos.profile().fault_weights.contains_key(k)), "λ={name}: only the profile's types");
    }
}
