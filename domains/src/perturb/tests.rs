//! Suite-wide properties of the perturbation layer: determinism, meaning
//! preservation (every slot value can be read back from every perturbed
//! description), level discipline, and the brittle agent's degradation.

use std::collections::BTreeSet;

use pretty_assertions::assert_eq;

use super::lexicon::{self, PAST_DATE};
use super::meaning;
use super::phrasing::{PRIORITIES, Piece, SlotKind, find_verbatim, parse_template, preceded_by_word, text_before};
use super::temporal::{parse_clock, parse_date, parse_relative, scan_dates, scan_times};
use super::*;
use crate::agent::play_calls;
use toolenv_core::{Task, phrasing::Template};

/// Seeds per (task, level) in the suite-wide tests.
const SEEDS: u64 = 50;

fn passes(task: &'static Task, calls: &[toolenv_core::Call]) -> bool {
    play_calls(task, 0, 0, calls).verdict().is_some_and(|v| v.passed)
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
        SlotKind::Time(_) => parse_clock(text).map(|(m, _)| toolenv_core::date::format_time(m)),
        _ => Some(text.to_owned()),
    };
    match SlotKind::of(&task.slots[slot]) {
        SlotKind::Date(_) => scan_dates(description, Some(task.today)).into_iter().map(|(start, _, d)| (start, d.to_string())).collect(),
        SlotKind::Time(_) => scan_times(description).into_iter().map(|(start, _, m)| (start, toolenv_core::date::format_time(m))).collect(),
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
        SlotKind::Time(_) => parse_clock(text).map(|(m, len)| (toolenv_core::date::format_time(m), len)),
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
    let mut wrong_fails = std::collections::BTreeMap::new();
    let mut tally = Tally::default();
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
                // Distractors and corrections keep to the meaning rules on a user's paraphrase too.
                let ungrammatical = vec![false; task.template.variants.len() + 1];
                check_meaning(task, level, seed, &perturbed, &mut wrong_fails, &ungrammatical, &mut tally);
            }
        }
        assert!(tally.first.is_empty(), "{:#?}", tally.first);
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
            // No correction: no reference argument holds the date whose wrong value would fail (see meaning::wrong_value_fails).
            "Book the cheapest flight from LON to PAR on Monday, January 5, 2026 for Bob. I am writing this from my phone, so please \
             excuse the brevity.",
            vec![Relation::DateFormat, Relation::Distractor],
        ),
        (
            Level::Heavy,
            "Thanks in advance; it has been a hectic week. On Monday, January 5, 2026, Bob should be booked on the lowest-priced \
             flight from LON to PAR.",
            vec![Relation::Voice, Relation::Reordering, Relation::Synonym, Relation::DateFormat, Relation::Distractor],
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
        serde_json::json!({"relation": "distractor", "params": {
            "position": "end", "text": "I am writing this from my phone, so please excuse the brevity."
        }})
    );
    // A correction, with a wrong value that fails the oracle.
    let task = crate::task("scheduling/book-meeting/001").unwrap();
    let perturbed = perturb(task, Level::Medium, 19, None);
    assert_eq!(
        perturbed.description,
        "Book a meeting on 2026-01-01 at 08:00 about 'Review'. One correction: the time is not 08:00 but 09:00. Thanks in advance; \
         it has been a hectic week."
    );
    assert_eq!(
        serde_json::to_value(&perturbed.applied[1]).unwrap(),
        serde_json::json!({"relation": "correction", "params": {"slot": "time", "style": "not_but", "true": "09:00", "wrong": "08:00"}})
    );
}

/// Seeds per (task, level) in the proof that perturbations keep the meaning.
const PROOF_SEEDS: u64 = 1000;

/// Verbs whose form shows the number of their subject.
const SINGULAR_VERBS: &[&str] = &["is", "was", "has", "does", "needs", "wants", "says", "reports", "takes", "goes", "holds"];
const PLURAL_VERBS: &[&str] = &["are", "were", "have", "do", "need", "want", "say", "report", "take", "go", "hold"];
/// Words that, right before a slot, show it is not a clause's subject.
const NOT_A_SUBJECT: &[&str] = &[
    "about", "after", "and", "as", "at", "because", "before", "but", "by", "for", "from", "if", "in", "of", "on", "or", "so", "than",
    "that", "then", "to", "when", "while", "with", "without",
];

/// Whether a slot's value is a plural noun phrase: a count other than 1, or
/// a text whose last word is a regular plural ("Headphones", "Earbuds").
fn is_plural(slot: &toolenv_core::Slot) -> bool {
    match SlotKind::of(slot) {
        SlotKind::Number => slot.value != "1",
        SlotKind::Text => {
            let last = slot.value.rsplit(' ').next().unwrap_or_default();
            last.len() > 3 && last.ends_with('s') && !["ss", "us", "is"].iter().any(|e| last.ends_with(e))
        }
        _ => false,
    }
}

/// Number disagreements in a phrasing filled with a task's slot values: a
/// slot that heads a clause ("{product} …", "The {product} …", "Flight
/// {flight} …") and the first verb of the clause after it, where the verb's
/// number (`is`/`are`, `has`/`have`, …) is not the value's.
fn agreement_errors(template: &str, task: &Task) -> Vec<String> {
    let pieces = parse_template(template, &task.slots);
    let mut errors = Vec::new();
    for (k, piece) in pieces.iter().enumerate() {
        let Piece::Slot(slot) = *piece else { continue };
        let before = text_before(&pieces, k);
        if k > 0 && before.is_empty() {
            continue;
        }
        let clause = before.rfind(['.', ';', ':', ',', '?', '!']).map_or(before, |p| &before[p + 1..]);
        if clause.contains('(') {
            continue; // an apposition, as in "(customer {customer_id})"
        }
        let lead: Vec<String> = clause
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .skip_while(|w| w == "the")
            .collect();
        let heads = match lead.as_slice() {
            [] => true,
            [word] => !NOT_A_SUBJECT.contains(&word.as_str()),
            _ => false,
        };
        if !heads {
            continue;
        }
        // The first verb of the clause after the slot, skipping other slots.
        let verb = pieces[k + 1..]
            .iter()
            .map_while(|p| match p {
                Piece::Slot(_) => Some(None),
                Piece::Text(t) => {
                    let cut = t.find(['.', ';', ':', ',', '?', '!']);
                    let words: Vec<&str> =
                        t[..cut.unwrap_or(t.len())].split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
                    // A verb after "to" is an infinitive ("asked for invoices to go").
                    let finite = |i: usize| i == 0 || words[i - 1] != "to";
                    let verb = (0..words.len())
                        .find(|&i| finite(i) && (SINGULAR_VERBS.contains(&words[i]) || PLURAL_VERBS.contains(&words[i])))
                        .map(|i| words[i]);
                    match (verb, cut) {
                        (Some(v), _) => Some(Some(v)),
                        (None, Some(_)) => None,
                        (None, None) => Some(None),
                    }
                }
            })
            .flatten()
            .next();
        let Some(verb) = verb else { continue };
        let plural = is_plural(&task.slots[slot]);
        if plural == SINGULAR_VERBS.contains(&verb) {
            let number = if plural { "plural" } else { "singular" };
            errors.push(format!("{} '{}' ({number}) … {verb}: {template}", task.slots[slot].name, task.slots[slot].value));
        }
    }
    errors
}

#[test]
fn the_agreement_check_finds_a_plural_subject_with_a_singular_verb() {
    let task = crate::task("ecommerce/return/005").unwrap();
    assert!(is_plural(&task.slots[1]), "{:?}", task.slots[1]);
    let bad = "The {product} from the recent order of customer {customer} is going back because {reason}.";
    assert_eq!(agreement_errors(bad, task).len(), 1, "{bad}");
    assert!(agreement_errors("Customer {customer} has sent back the {product}, which is too tight.", task).is_empty());
    let bob = crate::task("travel/cheapest-flight/001").unwrap();
    assert_eq!(agreement_errors("{passenger} are flying from {origin} to {dest} on {date}.", bob).len(), 1);
    assert!(agreement_errors("For {passenger}, book a flight: {origin} is where it starts, on {date}; {dest} is the end.", bob).is_empty());
}

#[test]
fn every_phrasing_agrees_in_number_with_every_task_slot_value() {
    let mut errors = Vec::new();
    for task in crate::suite() {
        for text in std::iter::once(task.template.text).chain(task.template.variants.iter().map(|v| v.text)) {
            errors.extend(agreement_errors(text, task).into_iter().map(|e| format!("{}: {e}", task.id)));
        }
    }
    assert!(errors.is_empty(), "{errors:#?}");
}

/// What each meaning rule caught in one perturbation (empty when it kept
/// the meaning).
#[derive(Debug, Default)]
struct Tally {
    samples: usize,
    value_lost: usize,
    distractor_before_back_reference: usize,
    correction_passes: usize,
    disagreement: usize,
    first: Vec<String>,
}

impl Tally {
    fn count(&mut self, rule: fn(&mut Tally) -> &mut usize, what: String) {
        *rule(self) += 1;
        if self.first.len() < 8 {
            self.first.push(what);
        }
    }
}

/// Checks one perturbation against every meaning rule.
fn check_meaning(
    task: &'static Task,
    level: Level,
    seed: u64,
    perturbed: &Perturbed,
    wrong_fails: &mut std::collections::BTreeMap<(&'static str, usize, String), bool>,
    ungrammatical: &[bool],
    tally: &mut Tally,
) {
    let text = &perturbed.description;
    let what = |rule: &str| format!("{rule}: {} at {level}, seed {seed}: {text}", task.id);
    tally.samples += 1;
    let found: Vec<Vec<(usize, String)>> = (0..task.slots.len()).map(|i| mentions(task, i, text)).collect();
    for (i, slot) in task.slots.iter().enumerate() {
        if !found[i].iter().any(|(_, v)| *v == slot.value) {
            tally.count(|t| &mut t.value_lost, what(&format!("value {} lost", slot.value)));
        }
    }
    for applied in &perturbed.applied {
        match applied.relation {
            Relation::Distractor => {
                let distractor = applied.param("text").expect("recorded");
                let at = text.find(distractor).expect("the distractor is in the text");
                let next = at + distractor.len() + 1;
                if next >= text.len() {
                    continue;
                }
                let starts = meaning::sentence_starts(text, |_| false);
                assert!(starts.contains(&next), "a distractor is a sentence of its own: {}", what("distractor"));
                let end = starts.iter().copied().find(|&s| s > next).unwrap_or(text.len());
                let names_a_slot = found.iter().flatten().any(|(s, _)| (next..end).contains(s));
                if meaning::refers_back(&text[next..end], names_a_slot) {
                    tally.count(|t| &mut t.distractor_before_back_reference, what("distractor before a back-reference"));
                }
            }
            Relation::Correction => {
                let slot = task.slots.iter().position(|s| Some(s.name) == applied.param("slot")).expect("a slot of the task");
                let wrong = mentions_of(task, slot, applied.param("wrong").expect("recorded"));
                let fails = *wrong_fails
                    .entry((task.id.as_str(), slot, wrong.clone()))
                    .or_insert_with(|| meaning::wrong_value_fails(task, slot, &wrong));
                if !fails {
                    tally.count(|t| &mut t.correction_passes, what(&format!("wrong {} {wrong} passes", task.slots[slot].name)));
                }
            }
            _ => {}
        }
    }
    let variant = perturbed
        .applied
        .iter()
        .find(|a| a.param("source") == Some("template_bank"))
        .map_or(0, |a| 1 + a.param("variant").and_then(|v| v.parse::<usize>().ok()).expect("a variant index"));
    if ungrammatical[variant] {
        tally.count(|t| &mut t.disagreement, what("number disagreement"));
    }
}

#[test]
fn every_perturbation_keeps_the_meaning_over_a_thousand_seeds() {
    let mut wrong_fails = std::collections::BTreeMap::new();
    let mut tallies: Vec<(Level, Tally)> = [Level::Light, Level::Medium, Level::Heavy].into_iter().map(|l| (l, Tally::default())).collect();
    for task in crate::suite() {
        assert!(passes(task, &task.reference), "{}: the reference solution passes", task.id);
        let ungrammatical: Vec<bool> = std::iter::once(task.template.text)
            .chain(task.template.variants.iter().map(|v| v.text))
            .map(|text| !agreement_errors(text, task).is_empty())
            .collect();
        for (level, tally) in &mut tallies {
            for seed in toolenv_core::testing::sweep_seeds(PROOF_SEEDS, 100) {
                let perturbed = perturb(task, *level, seed, None);
                check_meaning(task, *level, seed, &perturbed, &mut wrong_fails, &ungrammatical, tally);
            }
        }
    }
    let mut first = Vec::new();
    for (level, tally) in &mut tallies {
        println!(
            "ε = {level}: {} samples; value lost {}, distractor before a back-reference {}, correction's wrong value passes {}, \
             number disagreement {}",
            tally.samples, tally.value_lost, tally.distractor_before_back_reference, tally.correction_passes, tally.disagreement
        );
        first.append(&mut tally.first);
    }
    assert!(first.is_empty(), "{first:#?}");
}

/// Verbs an instruction to an agent starts with: the first word of every
/// tool of every domain, and the verbs the phrasings use.
fn instruction_verbs() -> BTreeSet<String> {
    let mut verbs: BTreeSet<String> = crate::registry::ALL
        .into_iter()
        .flat_map(|d| d.tools().iter().map(|t| t.name.split('_').next().unwrap_or_default().to_owned()))
        .collect();
    for verb in [
        "add", "apply", "arrange", "book", "buy", "call", "cancel", "close", "confirm", "create", "deal", "drop", "escalate", "find",
        "handle", "hold", "issue", "keep", "leave", "log", "look", "make", "move", "open", "order", "pick", "place", "please", "process",
        "purchase", "put", "raise", "record", "refund", "release", "remove", "reserve", "return", "schedule", "send", "set", "ship",
        "take", "use",
    ] {
        verbs.insert(verb.to_owned());
    }
    verbs
}

#[test]
fn distractors_give_no_instruction_and_name_nothing_any_task_knows() {
    // Everything an agent could take a distractor's words for: every slot
    // value, and every key and text of every task's initial state that is a
    // name, code, date or time (has a capital letter or a digit).
    let mut known: BTreeSet<String> = BTreeSet::new();
    fn collect(value: &serde_json::Value, known: &mut BTreeSet<String>) {
        fn add(text: &str, known: &mut BTreeSet<String>) {
            if text.chars().any(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) {
                known.insert(text.to_lowercase());
            }
        }
        match value {
            serde_json::Value::String(text) => add(text, known),
            serde_json::Value::Array(items) => items.iter().for_each(|v| collect(v, known)),
            serde_json::Value::Object(map) => map.iter().for_each(|(k, v)| {
                add(k, known);
                collect(v, known);
            }),
            _ => {}
        }
    }
    for task in crate::suite() {
        known.extend(task.slots.iter().map(|s| s.value.to_lowercase()));
        collect(&task.initial.to_json(), &mut known);
    }
    let verbs = instruction_verbs();
    let months_and_days = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october"]
        .into_iter()
        .chain(["november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today"])
        .chain(["tomorrow", "tonight", "yesterday"]);
    let mut problems = Vec::new();
    for domain in crate::registry::ALL {
        for sentence in lexicon::distractors(domain) {
            let lower = sentence.to_lowercase();
            let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()).collect();
            if verbs.contains(words[0]) {
                problems.push(format!("{domain}: starts like an instruction: {sentence}"));
            }
            for request in ["should", "must", "need", "needs", "please", "make sure", "could you", "can you", "don't", "do not"] {
                if !find_verbatim(&lower, request).is_empty() && !lower.contains("please excuse") {
                    problems.push(format!("{domain}: asks for something ({request}): {sentence}"));
                }
            }
            if sentence.contains('?') {
                problems.push(format!("{domain}: a question: {sentence}"));
            }
            for name in &known {
                if !find_verbatim(&lower, name).is_empty() {
                    problems.push(format!("{domain}: names '{name}', which a task knows: {sentence}"));
                }
            }
            // The only date is the marker, filled with a date before today.
            for word in months_and_days.clone() {
                if words.contains(&word) {
                    problems.push(format!("{domain}: mentions a date ({word}) other than its past date: {sentence}"));
                }
            }
            let unmarked = sentence.replace(PAST_DATE, "");
            if !scan_dates(&unmarked, None).is_empty() {
                problems.push(format!("{domain}: a date without the past-date marker: {sentence}"));
            }
        }
    }
    // Every date a distractor gets is before every task's today, in every style.
    for task in crate::suite() {
        for seed in 0..SEEDS {
            let perturbed = perturb(task, Level::Medium, seed, None);
            for applied in perturbed.applied.iter().filter(|a| a.relation == Relation::Distractor) {
                let text = applied.param("text").expect("recorded");
                for (_, _, date) in scan_dates(text, Some(task.today)) {
                    if date >= task.today {
                        problems.push(format!("{}: a distractor's date {date} is not before today {}: {text}", task.id, task.today));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
