//! Composes relations into one perturbation: draws a plan per level, picks
//! the phrasing, renders every slot, and records what was applied.

use crate::registry::Extensions;
use std::borrow::Cow;
use std::collections::BTreeSet;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use super::bank::ParaphraseBank;
use super::lexicon::{self, PAST_DATE, Synonym};
use super::meaning::{Wrong, refers_back, sentence_starts, wrong_values};
use super::phrasing::{Piece, SlotKind, parse_template, preceded_by_word, text_before};
use super::temporal::{DateStyle, TimeStyle, boundary_after, boundary_before, relative_forms};
use super::{Applied, Level, Perturbed, Relation};
use toolenv_core::Task;

/// Attempts at a plan before giving up on the level's guarantees (which only
/// a task without a template-bank frame can fail to meet).
const MAX_ATTEMPTS: usize = 64;
/// Chance, in fifths, that a relation other than a level's anchor is added.
const EXTRA_FIFTHS: u64 = 2;
/// Most synonym substitutions in one description.
const MAX_SYNONYMS: usize = 3;
/// Fewest distinct relations at [`Level::Heavy`].
const HEAVY_MIN_RELATIONS: usize = 3;

/// Perturbs a task's description at a level. A pure function of its inputs:
/// the same (task, level, seed, bank) always gives the same description and
/// the same applied relations.
///
/// `Level::Canonical` gives exactly [`Task::description`]. Any other level
/// gives a different description that applies at least one relation of the
/// level's own (at `Level::Heavy`, at least three relations in all), for
/// every task of the suite. The paraphrase bank, when it has entries for the
/// task, supplies half of the paraphrases.
pub fn perturb(task: &Task, level: Level, seed: u64, bank: Option<&ParaphraseBank>) -> Perturbed {
    let canonical = task.description();
    if level == Level::Canonical {
        return Perturbed { description: canonical, applied: Vec::new() };
    }
    let prepared = Prepared::new(task, bank, level);
    let mut dice = Dice::new(task, level, seed);
    let mut fallback = None;
    for _ in 0..MAX_ATTEMPTS {
        let (perturbed, complete) = prepared.attempt(level, &mut dice);
        if perturbed.description != canonical && complete {
            return perturbed;
        }
        if perturbed.description != canonical && fallback.is_none() {
            fallback = Some(perturbed);
        }
    }
    fallback.unwrap_or(Perturbed { description: canonical, applied: Vec::new() })
}

/// A seeded ChaCha8 generator with the few draws the engine needs.
struct Dice(ChaCha8Rng);

impl Dice {
    fn new(task: &Task, level: Level, seed: u64) -> Self {
        // FNV-1a: a stable hash of the task id (std's hasher is not stable).
        let id_hash = task.id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3));
        let key = splitmix(splitmix(seed) ^ id_hash ^ splitmix(level as u64 + 0x5045_5254));
        Self(ChaCha8Rng::seed_from_u64(key))
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        // Modulo bias is negligible for the small n used here.
        (self.0.next_u64() % n.max(1) as u64) as usize
    }

    fn fifths(&mut self, fifths: u64) -> bool {
        self.0.next_u64() % 5 < fifths
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Where a phrasing comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Canonical,
    TemplateBank(usize),
    ParaphraseBank(usize),
}

/// A phrasing and the structural relations it applies.
#[derive(Debug, Clone)]
struct Phrasing {
    source: Source,
    tags: &'static [Relation],
    pieces: Vec<Piece>,
}

/// How one slot is written in the description.
#[derive(Debug, Clone)]
struct Rendering {
    /// Every occurrence but the first (and the first too, unless `first`).
    plain: String,
    /// The first occurrence, when it differs (a correction).
    first: Option<String>,
    /// Whether the slot is written relative to today.
    relative: bool,
    /// Whether the rendering replaces a preceding "on" (`tomorrow`, not `on tomorrow`).
    absorbs_on: bool,
    /// The date or time style used, for a correction to match.
    date_style: DateStyle,
    time_style: TimeStyle,
}

/// A task's phrasings and slot kinds, computed once per perturbation.
struct Prepared<'a> {
    task: &'a Task,
    kinds: Vec<SlotKind>,
    canonical: Phrasing,
    variants: Vec<Phrasing>,
    bank: Vec<Phrasing>,
    lexicon: &'static [Synonym],
    /// Per slot, the wrong values a correction may give (those that fail
    /// the oracle); empty below the level that corrects.
    wrong: Cow<'static, [Vec<Wrong>]>,
}

impl<'a> Prepared<'a> {
    fn new(task: &'a Task, bank: Option<&ParaphraseBank>, level: Level) -> Self {
        let variants = (task.template.variants.iter().enumerate())
            .map(|(i, v)| Phrasing { source: Source::TemplateBank(i), tags: v.tags, pieces: parse_template(v.text, &task.slots) })
            .collect();
        let bank = bank
            .map(|b| b.phrasings(&task.id))
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, pieces)| Phrasing { source: Source::ParaphraseBank(i), tags: &[Relation::Paraphrase], pieces: pieces.clone() })
            .collect();
        let wrong = if level.relations().contains(&Relation::Correction) { wrong_values(task) } else { Cow::Borrowed(&[][..]) };
        Self {
            task,
            kinds: task.slots.iter().map(SlotKind::of).collect(),
            canonical: Phrasing { source: Source::Canonical, tags: &[], pieces: parse_template(task.template.text, &task.slots) },
            variants,
            bank,
            lexicon: task.domain.synonyms(),
            wrong,
        }
    }

    /// Whether `relation` can apply to the task at `level` with some phrasing.
    fn may_apply(&self, relation: Relation, level: Level) -> bool {
        let allowed = level.relations();
        match relation {
            Relation::Synonym => {
                std::iter::once(&self.canonical).chain(&self.variants).any(|p| !synonym_matches(&p.pieces, self.lexicon).is_empty())
            }
            Relation::DateFormat => self.kinds.iter().any(|k| k.is_temporal()),
            Relation::RelativeTime => self.kinds.iter().any(|k| matches!(k, SlotKind::Date(d) if d.days_since(self.task.today) >= 1)),
            Relation::Correction => self.wrong.iter().any(|w| !w.is_empty()),
            Relation::Distractor => true,
            Relation::Paraphrase if !self.bank.is_empty() => true,
            Relation::Paraphrase | Relation::Voice | Relation::Reordering | Relation::SplitMerge => {
                self.variants.iter().any(|v| v.tags.contains(&relation) && v.tags.iter().all(|t| allowed.contains(t)))
            }
        }
    }

    /// One attempt at a perturbation, and whether it meets the level's
    /// guarantees (the level's own anchor relation applied, and at
    /// `Level::Heavy` at least three relations).
    fn attempt(&self, level: Level, dice: &mut Dice) -> (Perturbed, bool) {
        // Levels are cumulative: draw each tier's anchor and extras in turn.
        let mut wanted = BTreeSet::new();
        let mut anchor = None;
        for tier in [Level::Light, Level::Medium, Level::Heavy].into_iter().filter(|t| *t <= level) {
            let own: Vec<Relation> = tier.own_relations().iter().copied().filter(|r| self.may_apply(*r, level)).collect();
            let tier_anchor = dice.pick(&own).copied();
            for &relation in tier.own_relations() {
                if Some(relation) == tier_anchor || dice.fifths(EXTRA_FIFTHS) {
                    wanted.insert(relation);
                }
            }
            if tier == level {
                anchor = tier_anchor;
            }
        }
        if level == Level::Heavy {
            let mut rest: Vec<Relation> = level.relations().iter().copied().filter(|r| !wanted.contains(r) && !r.is_structural()).collect();
            while wanted.len() < HEAVY_MIN_RELATIONS && !rest.is_empty() {
                wanted.insert(rest.remove(dice.below(rest.len())));
            }
        }

        let mut applied = Vec::new();
        let mut phrasing = self.choose_phrasing(level, anchor, &wanted, dice, &mut applied);
        // A user-supplied paraphrase is used as written: no synonyms.
        if wanted.contains(&Relation::Synonym) && !matches!(phrasing.source, Source::ParaphraseBank(_)) {
            applied.extend(apply_synonyms(&mut phrasing, self.lexicon, dice));
        }
        let mut renderings = self.plain_renderings();
        if wanted.contains(&Relation::RelativeTime) {
            applied.extend(self.apply_relative(&phrasing.pieces, &mut renderings, dice));
        }
        if wanted.contains(&Relation::DateFormat) {
            applied.extend(self.apply_date_format(&mut renderings, dice));
        }
        let mut trailer = None;
        if wanted.contains(&Relation::Correction) {
            applied.extend(self.apply_correction(&phrasing.pieces, &mut renderings, &mut trailer, dice));
        }
        // A closing correction refers back, so it is written before a distractor is placed.
        if let Some(trailer) = trailer {
            phrasing.pieces.push(Piece::Text(format!(" {trailer}")));
        }
        let (mut description, spans) = render(&phrasing.pieces, &renderings);
        if wanted.contains(&Relation::Distractor) {
            applied.extend(self.apply_distractor(&mut description, &spans, dice));
        }

        let distinct: BTreeSet<Relation> = applied.iter().map(|a| a.relation).collect();
        let anchored = anchor.is_none_or(|a| distinct.contains(&a));
        let enough = level != Level::Heavy || distinct.len() >= HEAVY_MIN_RELATIONS;
        (Perturbed { description, applied }, anchored && enough)
    }

    /// Picks the phrasing: an alternative embodying the highest-tier
    /// structural relation wanted (the anchor's, if it is structural), or
    /// the canonical template when none is wanted.
    fn choose_phrasing(
        &self,
        level: Level,
        anchor: Option<Relation>,
        wanted: &BTreeSet<Relation>,
        dice: &mut Dice,
        applied: &mut Vec<Applied>,
    ) -> Phrasing {
        let required = anchor
            .filter(|a| a.is_structural())
            .or_else(|| wanted.iter().copied().filter(|r| r.is_structural()).max_by_key(|r| (r.tier(), *r == Relation::Paraphrase)));
        let Some(required) = required else {
            return self.canonical.clone();
        };
        let allowed = level.relations();
        let candidates: Vec<&Phrasing> =
            self.variants.iter().filter(|v| v.tags.contains(&required) && v.tags.iter().all(|t| allowed.contains(t))).collect();
        // A paraphrase comes from the user's bank half of the time, when it has entries.
        let use_bank = required == Relation::Paraphrase && !self.bank.is_empty() && (candidates.is_empty() || dice.below(2) == 0);
        let chosen = if use_bank { dice.pick(&self.bank) } else { dice.pick(&candidates).copied() };
        let Some(chosen) = chosen else {
            return self.canonical.clone();
        };
        for &relation in chosen.tags {
            let (source, index) = match chosen.source {
                Source::TemplateBank(i) => ("template_bank", i),
                Source::ParaphraseBank(i) => ("paraphrase_bank", i),
                Source::Canonical => unreachable!("the canonical phrasing has no tags"),
            };
            applied.push(Applied::new(relation, [("source", source.to_owned()), ("variant", index.to_string())]));
        }
        chosen.clone()
    }

    fn plain_renderings(&self) -> Vec<Rendering> {
        self.task
            .slots
            .iter()
            .map(|s| Rendering {
                plain: s.value.clone(),
                first: None,
                relative: false,
                absorbs_on: false,
                date_style: DateStyle::Iso,
                time_style: TimeStyle::H24,
            })
            .collect()
    }

    /// Writes one future date slot relative to today. Only a slot written
    /// `on {slot}` everywhere qualifies, so the phrase reads well.
    fn apply_relative(&self, pieces: &[Piece], renderings: &mut [Rendering], dice: &mut Dice) -> Option<Applied> {
        let today = self.task.today;
        let candidates: Vec<usize> = (0..self.kinds.len())
            .filter(|&i| matches!(self.kinds[i], SlotKind::Date(d) if d.days_since(today) >= 1))
            .filter(|&i| {
                occurrences(pieces, i).all(|k| preceded_by_word(text_before(pieces, k), "on")) && occurrences(pieces, i).count() > 0
            })
            .collect();
        let &slot = dice.pick(&candidates)?;
        let SlotKind::Date(date) = self.kinds[slot] else { unreachable!("candidates are dates") };
        let forms = relative_forms(date, today);
        let form = dice.pick(&forms)?;
        renderings[slot].plain = form.text.clone();
        renderings[slot].relative = true;
        renderings[slot].absorbs_on = form.absorbs_on;
        Some(Applied::new(
            Relation::RelativeTime,
            [
                ("slot", self.task.slots[slot].name.to_owned()),
                ("text", form.text.clone()),
                ("today", today.to_string()),
                ("resolves_to", date.to_string()),
            ],
        ))
    }

    /// Writes some (at least one) of the date and time slots not already
    /// written relatively in another format.
    fn apply_date_format(&self, renderings: &mut [Rendering], dice: &mut Dice) -> Vec<Applied> {
        let candidates: Vec<usize> = (0..self.kinds.len()).filter(|&i| self.kinds[i].is_temporal() && !renderings[i].relative).collect();
        let mut chosen: Vec<usize> = candidates.iter().copied().filter(|_| dice.fifths(3)).collect();
        if chosen.is_empty()
            && let Some(&one) = dice.pick(&candidates)
        {
            chosen.push(one);
        }
        chosen
            .into_iter()
            .map(|i| {
                let (format, text) = match self.kinds[i] {
                    SlotKind::Date(date) => {
                        let style = *dice.pick(&DateStyle::VARIED).expect("styles");
                        renderings[i].date_style = style;
                        (style.pattern(), style.render(date))
                    }
                    SlotKind::Time(minutes) => {
                        let style = *dice.pick(&TimeStyle::VARIED).expect("styles");
                        renderings[i].time_style = style;
                        (style.pattern(), style.render(minutes))
                    }
                    _ => unreachable!("candidates are temporal"),
                };
                renderings[i].plain = text.clone();
                Applied::new(
                    Relation::DateFormat,
                    [("slot", self.task.slots[i].name.to_owned()), ("format", format.to_owned()), ("text", text)],
                )
            })
            .collect()
    }

    /// Gives one date, time or priority slot a wrong value first and then
    /// the true one, inline at its first occurrence or in a closing sentence.
    /// The wrong value is one an agent could not pass with (see
    /// [`super::meaning::wrong_value_fails`]); a slot without one is not
    /// corrected.
    fn apply_correction(
        &self,
        pieces: &[Piece],
        renderings: &mut [Rendering],
        trailer: &mut Option<String>,
        dice: &mut Dice,
    ) -> Option<Applied> {
        let candidates: Vec<usize> = (0..self.kinds.len())
            .filter(|&i| occurrences(pieces, i).count() > 0 && !renderings[i].relative && !self.wrong[i].is_empty())
            .filter(|&i| match self.kinds[i] {
                SlotKind::Date(_) | SlotKind::Time(_) => true,
                SlotKind::Priority => occurrences(pieces, i).all(|k| preceded_by_word(text_before(pieces, k), "priority")),
                _ => false,
            })
            .collect();
        let &slot = dice.pick(&candidates)?;
        let rendering = &renderings[slot];
        let (wrong, label) = match *dice.pick(&self.wrong[slot])? {
            Wrong::Date(date) => (rendering.date_style.render(date), "date"),
            Wrong::Time(minutes) => (rendering.time_style.render(minutes), "time"),
            Wrong::Priority(priority) => (priority.to_owned(), "priority"),
        };
        let truth = rendering.plain.clone();
        // A closing sentence must name the slot unambiguously.
        let same_label =
            (0..self.kinds.len()).filter(|&i| std::mem::discriminant(&self.kinds[i]) == std::mem::discriminant(&self.kinds[slot])).count();
        let closing_ok = same_label == 1 && occurrences(pieces, slot).count() == 1;
        let styles: &[&str] = if closing_ok {
            &["sorry_i_meant", "make_that", "correction", "got_it_wrong", "not_but"]
        } else {
            &["sorry_i_meant", "make_that", "correction"]
        };
        let style = *dice.pick(styles)?;
        let first = match style {
            "sorry_i_meant" => format!("{wrong} (sorry, I meant {truth})"),
            "make_that" => format!("{wrong} (no, make that {truth})"),
            "correction" => format!("{wrong} (correction: {truth})"),
            "got_it_wrong" => {
                *trailer = Some(format!("Sorry, I got the {label} wrong: it is {truth}."));
                wrong.clone()
            }
            _ => {
                *trailer = Some(format!("One correction: the {label} is not {wrong} but {truth}."));
                wrong.clone()
            }
        };
        renderings[slot].first = Some(first);
        Some(Applied::new(
            Relation::Correction,
            [("slot", self.task.slots[slot].name.to_owned()), ("wrong", wrong), ("true", truth), ("style", style.to_owned())],
        ))
    }

    /// Adds one irrelevant sentence at the start, the end, or between two
    /// sentences of the rendered description, never right before a sentence
    /// that [`refers_back`] (whose slot values are at `spans`).
    ///
    /// The position is drawn over every sentence boundary, and drawn again
    /// among the allowed ones only if the first draw falls before a sentence
    /// that refers back, so descriptions whose first draw was fine stay as
    /// they were before the rule.
    fn apply_distractor(&self, description: &mut String, spans: &[(usize, usize)], dice: &mut Dice) -> Option<Applied> {
        let sentences: Vec<&str> = lexicon::distractors(self.task.domain).collect();
        let mut text = (*dice.pick(&sentences)?).to_owned();
        if text.contains(PAST_DATE) {
            let past = self.task.today.add_days(-(2 + dice.below(39) as i64));
            let style = if dice.fifths(2) { DateStyle::Iso } else { *dice.pick(&DateStyle::VARIED).expect("styles") };
            text = text.replace(PAST_DATE, &style.render(past));
        }
        let in_slot = |i: usize| spans.iter().any(|&(start, end)| (start..end).contains(&i));
        let starts = sentence_starts(description, in_slot);
        let glued = |k: usize| {
            let (start, end) = (starts[k], starts.get(k + 1).copied().unwrap_or(description.len()));
            refers_back(&description[start..end], spans.iter().any(|&(s, e)| s < end && e > start))
        };
        // 0: the start, 1: the end, n ≥ 2: after sentence n - 1.
        let allowed = |position: usize| match position {
            0 => !glued(0),
            1 => true,
            n => !glued(n - 1),
        };
        let mut position = dice.below(starts.len() + 1);
        if !allowed(position) {
            let free: Vec<usize> = (0..=starts.len()).filter(|&p| allowed(p)).collect();
            position = *dice.pick(&free).expect("the end is always free");
        }
        let label = match position {
            0 => {
                description.insert_str(0, &format!("{text} "));
                "start".to_owned()
            }
            1 => {
                description.push(' ');
                description.push_str(&text);
                "end".to_owned()
            }
            n => {
                description.insert_str(starts[n - 1], &format!("{text} "));
                format!("after sentence {}", n - 1)
            }
        };
        Some(Applied::new(Relation::Distractor, [("position", label), ("text", text)]))
    }
}

/// The indices of the pieces that are slot `slot`.
fn occurrences(pieces: &[Piece], slot: usize) -> impl Iterator<Item = usize> + '_ {
    pieces.iter().enumerate().filter(move |(_, p)| **p == Piece::Slot(slot)).map(|(k, _)| k)
}

/// The lexicon entries that occur in a phrasing's literal text.
fn synonym_matches(pieces: &[Piece], lexicon: &'static [Synonym]) -> Vec<&'static Synonym> {
    lexicon.iter().filter(|s| pieces.iter().any(|p| matches!(p, Piece::Text(t) if !find_phrase(t, s.from).is_empty()))).collect()
}

fn find_phrase(text: &str, phrase: &str) -> Vec<usize> {
    text.match_indices(phrase).map(|(i, _)| i).filter(|&i| boundary_before(text, i) && boundary_after(text, i + phrase.len())).collect()
}

/// Replaces one to three lexicon phrases with a synonym each, in one pass
/// over the literal text so no replacement is replaced again.
fn apply_synonyms(phrasing: &mut Phrasing, lexicon: &'static [Synonym], dice: &mut Dice) -> Vec<Applied> {
    let mut matching = synonym_matches(&phrasing.pieces, lexicon);
    let count = 1 + dice.below(matching.len().min(MAX_SYNONYMS));
    let mut chosen: Vec<(&Synonym, &str)> = Vec::new();
    while chosen.len() < count && !matching.is_empty() {
        let entry = matching.remove(dice.below(matching.len()));
        let to = *dice.pick(entry.to).expect("every entry has a replacement");
        chosen.push((entry, to));
    }
    let mut used = vec![false; chosen.len()];
    for piece in &mut phrasing.pieces {
        let Piece::Text(text) = piece else { continue };
        let mut out = String::with_capacity(text.len() + 16);
        let mut pos = 0;
        while pos < text.len() {
            let hit = chosen
                .iter()
                .enumerate()
                .filter(|(_, (s, _))| {
                    text[pos..].starts_with(s.from) && boundary_before(text, pos) && boundary_after(text, pos + s.from.len())
                })
                .max_by_key(|(_, (s, _))| s.from.len());
            if let Some((i, (s, to))) = hit {
                out.push_str(to);
                pos += s.from.len();
                used[i] = true;
            } else {
                let c = text[pos..].chars().next().expect("pos is inside the text");
                out.push(c);
                pos += c.len_utf8();
            }
        }
        *text = out;
    }
    chosen
        .iter()
        .zip(used)
        .filter(|(_, used)| *used)
        .map(|((s, to), _)| Applied::new(Relation::Synonym, [("from", s.from.to_owned()), ("to", (*to).to_owned())]))
        .collect()
}

/// Fills a phrasing's slots with their renderings; returns the text and
/// the byte range of every slot's rendering in it.
fn render(pieces: &[Piece], renderings: &[Rendering]) -> (String, Vec<(usize, usize)>) {
    let mut out = String::new();
    let mut spans = Vec::new();
    let mut seen = vec![false; renderings.len()];
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Slot(i) => {
                let r = &renderings[*i];
                let text = if seen[*i] { &r.plain } else { r.first.as_ref().unwrap_or(&r.plain) };
                seen[*i] = true;
                if r.absorbs_on && preceded_by_word(&out, "on") {
                    let capital = out.ends_with("On ");
                    out.truncate(out.len() - 3);
                    if capital {
                        let start = out.len();
                        let mut chars = text.chars();
                        out.extend(chars.next().map(|c| c.to_ascii_uppercase()));
                        out.push_str(chars.as_str());
                        spans.push((start, out.len()));
                        continue;
                    }
                }
                spans.push((out.len(), out.len() + text.len()));
                out.push_str(text);
            }
        }
    }
    (out, spans)
}
