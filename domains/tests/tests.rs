//! The domains' integration tests, in one binary: each file is a module, so the
//! crate's tests link once.

mod chaos;
mod conversation;
mod generated;
mod golden;
mod hardening;
mod prose;
mod ruling;
mod solver;
mod soundness;
mod suite;
mod typed_answers;
mod user_answer;
