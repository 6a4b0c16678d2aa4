//! Templates: a task's canonical description with the alternative phrasings
//! written for it in its domain's `phrasing.rs`, each tagged with the
//! structural relations it embodies (reordering, paraphrase, voice,
//! split/merge).
//!
//! Every alternative names exactly the slots of its canonical template (each
//! at least once), writes dates as `on {date}` so relative dates read well,
//! and keeps every instruction of the original: what to do, to which record,
//! under which condition. Slot values are filled in later, so an alternative
//! can only change wording and order, never a value.

use toolenv_core::phrasing::{Relation, Variant};

pub(crate) const R: &[Relation] = &[Relation::Reordering];
pub(crate) const P: &[Relation] = &[Relation::Paraphrase];
pub(crate) const V: &[Relation] = &[Relation::Voice];
pub(crate) const S: &[Relation] = &[Relation::SplitMerge];
pub(crate) const VR: &[Relation] = &[Relation::Voice, Relation::Reordering];
pub(crate) const PR: &[Relation] = &[Relation::Paraphrase, Relation::Reordering];
pub(crate) const SR: &[Relation] = &[Relation::SplitMerge, Relation::Reordering];

pub(crate) const fn v(tags: &'static [Relation], text: &'static str) -> Variant {
    Variant { tags, text }
}
