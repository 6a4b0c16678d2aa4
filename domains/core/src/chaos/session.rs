//! Fault draws for sessions outside the built-in domains: what `toolenv
//! chaos` (the MCP proxy in front of any MCP server) draws from.
//!
//! The same draws as an episode's ([`Dice`], [`Chaos`]), keyed by (seed,
//! session) under their own domain separation, so a session's faults are a
//! pure function of (seed, session, call index, purpose) and never collide
//! with a built-in episode's. The built-in domains' draws are untouched.

use sha2::{Digest, Sha256};

use super::{Chaos, Dice, FaultKind, FaultProfile, Purpose};
use crate::delivery::{Answer, cut_list, cut_text};

/// The fault draws of one proxied session.
#[derive(Debug, Clone)]
pub struct SessionDraws {
    chaos: Chaos,
    dice: Dice,
}

/// A result cut short by a partial-response fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cut {
    /// Still valid JSON: its first list halved (marked `"truncated": true` or silently).
    Json(String),
    /// The text cut between a quarter and three quarters of its length.
    Raw(String),
}

impl SessionDraws {
    /// The draws of session `session` under `seed`.
    pub fn new(chaos: Chaos, seed: u64, session: &str) -> Self {
        let mut hash = Sha256::new();
        hash.update(b"toolenv.chaos.session.v1\0");
        hash.update(session.as_bytes());
        hash.update([0]);
        hash.update(seed.to_le_bytes());
        Self { chaos, dice: Dice { key: hash.finalize().into() } }
    }

    /// The profile drawn from.
    pub fn profile(&self) -> &FaultProfile {
        self.chaos.profile()
    }

    /// The fault newly drawn for call `index`, if any.
    pub fn fault(&self, index: u32) -> Option<FaultKind> {
        self.chaos.draw(&self.dice, index)
    }

    /// A high-latency fault's delay for call `index`, in simulated milliseconds.
    pub fn latency_ms(&self, index: u32) -> u64 {
        self.chaos.latency_ms(&self.dice, index)
    }

    /// A draw in [0, n) for the variant of a fault (a cascade's status, how a reply is lost).
    pub fn variant(&self, index: u32, n: u64) -> u64 {
        self.dice.below(index, Purpose::Variant, n)
    }

    /// Cuts a result text as a partial response does in the built-in
    /// domains: a JSON object's first list halved, or else the text cut
    /// short; `None` when there is nothing to cut.
    pub fn cut(&self, index: u32, text: &str) -> Option<Cut> {
        let draw = self.dice.draw(index, Purpose::Partial);
        if let Some(cut) = cut_list(text, draw) {
            return Some(Cut::Json(cut));
        }
        match cut_text(text, draw)? {
            Answer::Raw(raw) => Some(Cut::Raw(raw)),
            Answer::Result(text) => Some(Cut::Json(text)),
            Answer::Error(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(profile: &str, seed: u64, session: &str) -> SessionDraws {
        SessionDraws::new(Chaos::new(FaultProfile::preset(profile).unwrap()).unwrap(), seed, session)
    }

    #[test]
    fn a_sessions_faults_are_a_pure_function_of_seed_session_and_index_at_the_profiles_rate() {
        let a = draws("0.3", 1, "s");
        let faults: Vec<_> = (0..20_000).map(|i| a.fault(i)).collect();
        assert_eq!(faults, (0..20_000).map(|i| draws("0.3", 1, "s").fault(i)).collect::<Vec<_>>());
        assert_ne!(faults, (0..20_000).map(|i| draws("0.3", 1, "t").fault(i)).collect::<Vec<_>>());
        assert_ne!(faults, (0..20_000).map(|i| draws("0.3", 2, "s").fault(i)).collect::<Vec<_>>());
        let rate = faults.iter().filter(|f| f.is_some()).count() as f64 / 20_000.0;
        assert!((rate - 0.275).abs() < 0.01, "{rate}");
        assert!(faults.iter().flatten().all(|&k| a.profile().fault_weights.contains_key(&k)));
        assert!((0..1000).all(|i| draws("0.0", 1, "s").fault(i).is_none()));
    }

    #[test]
    fn a_cut_halves_a_list_or_cuts_the_text() {
        let d = draws("partial-response-only", 3, "s");
        let list = r#"{"flights":[{"id":1},{"id":2},{"id":3},{"id":4}]}"#;
        match d.cut(0, list) {
            Some(Cut::Json(text)) => assert!(text.contains(r#""id":2"#) && !text.contains(r#""id":3"#), "{text}"),
            other => panic!("{other:?}"),
        }
        match d.cut(0, "a plain text result") {
            Some(Cut::Raw(text)) => assert!(text.len() < 19 && "a plain text result".starts_with(&text)),
            other => panic!("{other:?}"),
        }
        assert_eq!(d.cut(0, ""), None);
    }
}
