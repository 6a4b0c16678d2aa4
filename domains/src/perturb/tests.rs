//! Suite-wide properties of the perturbation layer: determinism, meaning
//! preservation (every slot value can be read back from every perturbed
//! description), level discipline, and the brittle agent's degradation.

use std::collections::BTreeSet;

use pretty_assertions::assert_eq;

use super::phrasing::{PRIORITIES, Piece, SlotKind, find_verbatim, parse_template, preceded_by_word, text_before};
use super::temporal::{parse_clock, parse_date, parse_relative, scan_dates, scan_times};
use super::*;
use crate::agent::play;
use crate::task::Task;

/// Seeds per (task, level) in the suite-wide tests.
const SEEDS: u64 = 50;

fn passes(task: &'static Task, calls: &[crate::Call]) -> bool {
    play(task, 0, 0, calls).verdict().is_some_and(|v| v.passed)
}

/// Every perturbation of the suite at the levels above ε = 0.
fn every_perturbation() -> impl Iterator<Item = (&'static Task, Level, u64, Perturbed)> {
    crate::suite().iter().flat_map(|task| {
        [Level::Light, Level::Medium, Level::Heavy]
            .into_iter()
            .flat_map(move |level| (0..SEEDS).map(move |seed| (task, level, seed, perturb(task, level, seed, None))))
    })
}

#[test]
fn levels_come_from_epsilon() {
    for level in Level::ALL {
        assert_eq!(Level::from_epsilon(level.epsilon()), Ok(level));
    }
    assert_eq!(Level::from_epsilon(0.1 + 0.2 - 0.1), Ok(Level::Medium));
    for bad in [0.05, 0.4, 1.0, -0.1, f64::NAN] {
        assert!(Level::from_epsilon(bad).is_err(), "{bad}");
    }
    assert_eq!(Level::from_epsilon(0.25).unwrap_err().to_string(), "epsilon 0.25 is not a perturbation level: use 0, 0.1, 0.2 or 0.3");
    assert_eq!(Level::Heavy.relations().len(), 9);
    for level in Level::ALL {
        assert!(level.own_relations().iter().all(|r| r.tier() == level), "{level}");
        let below: BTreeSet<Relation> = level.relations().iter().copied().filter(|r| r.tier() < level).collect();
        assert_eq!(below.len() + level.own_relations().len(), level.relations().len());
    }
}

#[test]
fn every_suite_template_has_a_frame_whose_variants_keep_every_slot() {
    for task in crate::suite() {
        let frame = task.template;
        let canonical = parse_template(task.template.text, &task.slots);
        let all: BTreeSet<usize> = (0..task.slots.len()).collect();
        for tag in [Relation::Reordering, Relation::Paraphrase, Relation::Voice, Relation::SplitMerge] {
            let alone = frame.variants.iter().filter(|v| v.tags[0] == tag).count();
            assert!(alone >= 1, "{}: no variant led by {tag}", task.id);
        }
        assert!(frame.variants.iter().any(|v| v.tags == [Relation::Reordering]), "{}: light needs a plain reordering", task.id);
        assert!(frame.variants.iter().filter(|v| v.tags.contains(&Relation::Paraphrase)).count() >= 2, "{}: paraphrases", task.id);
        for variant in frame.variants {
            let pieces = parse_template(variant.text, &task.slots);
            assert_ne!(pieces, canonical, "{}: {}", task.id, variant.text);
            let used: BTreeSet<usize> = pieces.iter().filter_map(|p| if let Piece::Slot(i) = p { Some(*i) } else { None }).collect();
            assert_eq!(used, all, "{}: {}", task.id, variant.text);
            for (k, piece) in pieces.iter().enumerate() {
                match piece {
                    Piece::Text(t) => assert!(!t.contains(['{', '}']), "{}: unknown placeholder in {}", task.id, variant.text),
                    Piece::Slot(i) => {
                        if let SlotKind::Date(_) = SlotKind::of(&task.slots[*i]) {
                            assert!(preceded_by_word(text_before(&pieces, k), "on"), "{}: date not after 'on': {}", task.id, variant.text);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn canonical_level_gives_exactly_the_description() {
    for task in crate::suite() {
        for seed in 0..SEEDS {
            assert_eq!(perturb(task, Level::Canonical, seed, None), Perturbed { description: task.description(), applied: vec![] });
        }
    }
}

#[test]
fn perturbations_are_deterministic_and_differ_from_the_canonical_description() {
    for (task, level, seed, perturbed) in every_perturbation() {
        let again = perturb(task, level, seed, None);
        assert_eq!(serde_json::to_string(&again).unwrap(), serde_json::to_string(&perturbed).unwrap());
        assert_ne!(perturbed.description, task.description(), "{} at {level}, seed {seed}", task.id);
    }
    // Different seeds give different descriptions.
    for task in crate::suite() {
        for level in [Level::Light, Level::Medium, Level::Heavy] {
            let distinct: BTreeSet<String> = (0..SEEDS).map(|s| perturb(task, level, s, None).description).collect();
            assert!(distinct.len() >= 10, "{} at {level}: only {} distinct descriptions", task.id, distinct.len());
        }
    }
}

#[test]
fn applied_relations_are_drawn_from_the_level() {
    let mut seen: Vec<BTreeSet<Relation>> = vec![BTreeSet::new(); 4];
    for (task, level, seed, perturbed) in every_perturbation() {
        let what = format!("{} at {level}, seed {seed}: {:?}", task.id, perturbed.applied);
        let relations: BTreeSet<Relation> = perturbed.applied.iter().map(|a| a.relation).collect();
        assert!(relations.iter().all(|r| level.relations().contains(r)), "{what}");
        assert!(relations.iter().any(|r| r.tier() == level), "no relation of the level's own: {what}");
        if level == Level::Heavy {
            assert!(relations.len() >= 3, "heavy combines at least three relations: {what}");
        }
        seen[level as usize].extend(relations);
    }
    for level in [Level::Light, Level::Medium, Level::Heavy] {
        assert_eq!(seen[level as usize], level.relations().iter().copied().collect(), "every relation of {level} is used");
    }
}

/// Where each mention of a slot's true (and, for a correction, wrong) value
/// is in a description, read back by value rather than by string.
fn mentions(task: &Task, slot: usize, description: &str) -> Vec<(usize, String)> {
    let value = |text: &str| match SlotKind::of(&task.slots[slot]) {
        SlotKind::Date(_) => parse_date(text).map(|(d, _)| d.to_string()),
        SlotKind::Time(_) => parse_clock(text).map(|(m, _)| crate::date::format_time(m)),
        _ => Some(text.to_owned()),
    };
    match SlotKind::of(&task.slots[slot]) {
        SlotKind::Date(_) => scan_dates(description, Some(task.today)).into_iter().map(|(start, _, d)| (start, d.to_string())).collect(),
        SlotKind::Time(_) => scan_times(description).into_iter().map(|(start, _, m)| (start, crate::date::format_time(m))).collect(),
        SlotKind::Priority => {
            let mut found: Vec<(usize, String)> =
                PRIORITIES.iter().flat_map(|p| find_verbatim(description, p).into_iter().map(|(s, _)| (s, (*p).to_owned()))).collect();
            found.sort();
            found
        }
        _ => {
            let found = find_verbatim(description, &task.slots[slot].value);
            found.into_iter().filter_map(|(s, e)| value(&description[s..e]).map(|v| (s, v))).collect()
        }
    }
}

#[test]
fn every_slot_value_can_be_read_back_and_corrections_end_on_it() {
    for (task, level, seed, perturbed) in every_perturbation() {
        let text = &perturbed.description;
        for (i, slot) in task.slots.iter().enumerate() {
            let what = format!("{} at {level}, seed {seed}, slot {}: {text}", task.id, slot.name);
            let found = mentions(task, i, text);
            assert!(found.iter().any(|(_, v)| *v == slot.value), "value {} not found: {what}", slot.value);
            let correction = perturbed.applied.iter().find(|a| a.relation == Relation::Correction && a.param("slot") == Some(slot.name));
            if let Some(correction) = correction {
                let wrong = mentions_of(task, i, correction.param("wrong").unwrap());
                assert_ne!(wrong, slot.value, "{what}");
                let relevant: Vec<&(usize, String)> = found.iter().filter(|(_, v)| *v == slot.value || *v == wrong).collect();
                assert!(relevant.iter().any(|(_, v)| *v == wrong), "wrong value {wrong} missing: {what}");
                assert_eq!(relevant.last().unwrap().1, slot.value, "the correction must end on the true value: {what}");
            }
            if !SlotKind::of(slot).is_temporal() && correction.is_none() {
                // Verbatim kinds: the exact value, and nothing but it, wherever the slot is.
                assert!(text.contains(&slot.value), "{what}");
            }
        }
    }
}

/// The value a recorded date, time or priority text stands for.
fn mentions_of(task: &Task, slot: usize, text: &str) -> String {
    match SlotKind::of(&task.slots[slot]) {
        SlotKind::Date(_) => parse_date(text).map(|(d, len)| (d.to_string(), len)),
        SlotKind::Time(_) => parse_clock(text).map(|(m, len)| (crate::date::format_time(m), len)),
        _ => Some((text.to_owned(), text.len())),
    }
    .filter(|(_, len)| *len == text.len())
    .unwrap_or_else(|| panic!("{text} does not parse back"))
    .0
}

#[test]
fn recorded_parameters_match_the_text_and_resolve_to_the_true_values() {
    for (task, level, seed, perturbed) in every_perturbation() {
        let text = &perturbed.description;
        for applied in &perturbed.applied {
            let what = format!("{} at {level}, seed {seed}: {applied:?} in {text}", task.id);
            let slot = applied.param("slot").map(|name| task.slots.iter().position(|s| s.name == name).expect("a slot of the task"));
            match applied.relation {
                Relation::DateFormat => {
                    let shown = applied.param("text").unwrap();
                    assert!(text.contains(shown), "{what}");
                    assert_eq!(mentions_of(task, slot.unwrap(), shown), task.slots[slot.unwrap()].value, "{what}");
                }
                Relation::RelativeTime => {
                    let shown = applied.param("text").unwrap();
                    let slot = slot.unwrap();
                    assert!(text.to_lowercase().contains(&shown.to_lowercase()), "{what}");
                    let resolved = parse_relative(shown, task.today).map(|(d, len)| (d.to_string(), len));
                    assert_eq!(resolved, Some((task.slots[slot].value.clone(), shown.len())), "{what}");
                    assert_eq!(applied.param("resolves_to"), Some(task.slots[slot].value.as_str()), "{what}");
                    let absolute: Vec<String> = scan_dates(text, None).into_iter().map(|(_, _, d)| d.to_string()).collect();
                    assert!(!absolute.contains(&task.slots[slot].value), "the relative date is also written out: {what}");
                }
                Relation::Correction => {
                    let truth = applied.param("true").unwrap();
                    assert_eq!(mentions_of(task, slot.unwrap(), truth), task.slots[slot.unwrap()].value, "{what}");
                    let wrong = applied.param("wrong").unwrap();
                    assert!(text.rfind(truth) > text.find(wrong), "{what}");
                }
                Relation::Synonym => {
                    assert!(text.contains(applied.param("to").unwrap()), "{what}");
                }
                Relation::Distractor => {
                    assert!(text.contains(applied.param("text").unwrap()), "{what}");
                }
                Relation::Paraphrase | Relation::Voice | Relation::Reordering | Relation::SplitMerge => {
                    assert_eq!(applied.param("source"), Some("template_bank"), "{what}");
                }
            }
        }
    }
}

#[test]
fn the_oracle_does_not_depend_on_the_description() {
    // The task (state, reference solution, checks) is untouched by ε: the
    // same reference solution passes, with no need for another one.
    for task in crate::suite() {
        for level in Level::ALL {
            let perturbed = perturb(task, level, 3, None);
            assert!(!perturbed.description.is_empty());
            assert!(passes(task, &task.reference), "{} at {level}", task.id);
        }
    }
}

#[test]
fn applied_relations_serialize_with_their_parameters() {
    let task = crate::task("scheduling/book-meeting/001").unwrap();
    let perturbed = (0..SEEDS)
        .map(|seed| perturb(task, Level::Light, seed, None))
        .find(|p| p.applied.iter().any(|a| a.relation == Relation::DateFormat && a.param("slot") == Some("date")))
        .expect("some seed formats the date");
    let json = serde_json::to_value(&perturbed).unwrap();
    let date_format = json["applied"].as_array().unwrap().iter().find(|a| a["relation"] == "date_format" && a["params"]["slot"] == "date");
    let params = &date_format.expect("recorded")["params"];
    assert!(params["format"].is_string() && params["text"].is_string(), "{params}");
    assert_eq!(parse_date(params["text"].as_str().unwrap()).map(|(d, _)| d.to_string()), Some("2026-01-01".to_owned()));
}

#[test]
fn a_paraphrase_bank_supplies_paraphrases_and_keeps_every_guarantee() {
    let bank = ParaphraseBank::from_json(
        r#"{
            "scheduling/book-meeting/001": ["Please add a 'Review' meeting to my calendar on January 1, 2026, starting at 9:00 AM."],
            "support/create-close/001": [
                "Tom Becker (customer C-104) had invoices moved to a separate billing address during the call. Log it as a ticket with the subject 'Invoice email change' and priority low, and close it with a resolution describing the change."
            ]
        }"#,
    )
    .unwrap();
    for id in ["scheduling/book-meeting/001", "support/create-close/001"] {
        let task = crate::task(id).unwrap();
        let mut from_bank = 0;
        for level in [Level::Medium, Level::Heavy] {
            for seed in 0..SEEDS {
                let perturbed = perturb(task, level, seed, Some(&bank));
                assert_eq!(perturbed, perturb(task, level, seed, Some(&bank)));
                assert_ne!(perturbed.description, task.description());
                let used = perturbed.applied.iter().any(|a| a.param("source") == Some("paraphrase_bank"));
                if used {
                    from_bank += 1;
                    assert!(perturbed.applied.iter().all(|a| a.relation != Relation::Synonym), "{perturbed:?}");
                }
                for (i, slot) in task.slots.iter().enumerate() {
                    assert!(mentions(task, i, &perturbed.description).iter().any(|(_, v)| *v == slot.value), "{id}: {perturbed:?}");
                }
            }
        }
        assert!(from_bank >= 10, "{id}: the bank was used {from_bank} times");
        // Light never paraphrases.
        for seed in 0..SEEDS {
            let light = perturb(task, Level::Light, seed, Some(&bank));
            assert_eq!(light, perturb(task, Level::Light, seed, None));
        }
    }
}

/// The brittle agent's pass rate per level, over the suite × [`SEEDS`] seeds.
fn brittle_pass_rates() -> Vec<(Level, usize, usize)> {
    Level::ALL
        .into_iter()
        .map(|level| {
            let mut passed = 0;
            let mut total = 0;
            for task in crate::suite() {
                for seed in 0..SEEDS {
                    let description = perturb(task, level, seed, None).description;
                    total += 1;
                    passed += usize::from(passes(task, &brittle_calls(task, &description)));
                }
            }
            (level, passed, total)
        })
        .collect()
}

#[test]
fn the_brittle_agent_passes_every_canonical_task_and_degrades_with_epsilon() {
    for task in crate::suite() {
        assert_eq!(brittle_calls(task, &task.description()), task.reference, "{}", task.id);
    }
    let rates = brittle_pass_rates();
    for (level, passed, total) in &rates {
        println!("brittle agent at ε = {level}: {passed}/{total} = {:.1}%", 100.0 * *passed as f64 / *total as f64);
    }
    let rate = |level: Level| rates[level as usize].1;
    assert_eq!(rate(Level::Canonical), rates[0].2, "every task passes at ε = 0");
    assert!(rate(Level::Light) < rate(Level::Canonical));
    assert!(rate(Level::Medium) < rate(Level::Light));
    assert!(rate(Level::Heavy) < rate(Level::Light));
    // The reference agent does not move: it knows the slots.
    for task in crate::suite() {
        assert!(passes(task, &task.reference), "{}", task.id);
    }
}

#[test]
fn a_template_without_a_frame_still_gets_the_slot_level_relations() {
    let mut task = crate::task("scheduling/cancel/005").unwrap().clone();
    const DROP: Template = Template::plain("Please drop '{topic}' from the calendar on {date}.");
    task.template = &DROP;
    for level in [Level::Light, Level::Medium, Level::Heavy] {
        for seed in 0..SEEDS {
            let perturbed = perturb(&task, level, seed, None);
            assert_ne!(perturbed.description, task.description(), "{level}, seed {seed}");
            let relations: BTreeSet<Relation> = perturbed.applied.iter().map(|a| a.relation).collect();
            assert!(relations.iter().all(|r| level.relations().contains(r) && !r.is_structural()), "{perturbed:?}");
            assert!(perturbed.description.contains("'Vendor demo'"), "{perturbed:?}");
        }
    }
    // With nothing to vary at all, a light perturbation leaves the text as it is.
    const CANCEL_IT: Template = Template::plain("Cancel it.");
    task.template = &CANCEL_IT;
    task.slots.clear();
    assert_eq!(perturb(&task, Level::Light, 1, None), Perturbed { description: "Cancel it.".into(), applied: vec![] });
    assert_ne!(perturb(&task, Level::Medium, 1, None).description, "Cancel it.");
}

#[test]
fn perturbations_are_stable_across_versions() {
    // Golden values: a change here changes every recorded run's descriptions.
    let task = crate::task("travel/cheapest-flight/001").unwrap();
    let golden = [
        (Level::Canonical, "Book the cheapest flight from LON to PAR on 2026-01-05 for Bob.", vec![]),
        (Level::Light, "For Bob, book the cheapest flight from LON to PAR on 2026-01-05.", vec![Relation::Reordering]),
        (
            Level::Medium,
            "Book the cheapest flight from LON to PAR on Tuesday, January 6, 2026 for Bob. I am writing this from my phone, so please \
             excuse the brevity. Sorry, I got the date wrong: it is Monday, January 5, 2026.",
            vec![Relation::DateFormat, Relation::Correction, Relation::Distractor],
        ),
        (
            Level::Heavy,
            "On Monday, January 5, 2026, Bob should be booked on the lowest-priced flight from LON to PAR.",
            vec![Relation::Voice, Relation::Reordering, Relation::Synonym, Relation::DateFormat],
        ),
    ];
    for (level, description, relations) in golden {
        let perturbed = perturb(task, level, 42, None);
        assert_eq!(perturbed.description, description);
        assert_eq!(perturbed.applied.iter().map(|a| a.relation).collect::<Vec<_>>(), relations);
    }
    let json = serde_json::to_value(perturb(task, Level::Medium, 42, None)).unwrap();
    assert_eq!(
        json["applied"][1],
        serde_json::json!({"relation": "correction", "params": {
            "slot": "date", "style": "got_it_wrong", "true": "Monday, January 5, 2026", "wrong": "Tuesday, January 6, 2026"
        }})
    );
}
