//! Stale results: a stale-data fault answers a call with an earlier result
//! of the same tool and arguments in the session that differs from the
//! current one, and [`Recent`] keeps what that needs.

use serde_json::Value;

/// The results a stale reply may be drawn from, for one (tool, arguments):
/// the latest and, before it, the latest that differs from it — all that
/// "the most recent earlier result different from this one" ever needs, so a
/// long session keeps two results per call, not every one.
#[derive(Default)]
pub(super) struct Recent {
    last: Option<Value>,
    before: Option<Value>,
}

impl Recent {
    /// The most recent earlier result different from `result`, then `result` recorded.
    pub(super) fn stale_then_record(&mut self, result: &Value) -> Option<Value> {
        match &self.last {
            Some(last) if last == result => self.before.clone(),
            _ => {
                let stale = self.last.take();
                self.before.clone_from(&stale);
                self.last = Some(result.clone());
                stale
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stale_result_is_the_latest_earlier_one_that_differs() {
        let mut recent = Recent::default();
        let (a, b, c) = (json!({"seats": 3}), json!({"seats": 2}), json!({"seats": 1}));
        let stale: Vec<Option<Value>> = [&a, &a, &b, &b, &c, &c, &b].iter().map(|r| recent.stale_then_record(r)).collect();
        // Walking back from each result to the first that differs, as a full history would.
        assert_eq!(stale, [None, None, Some(a.clone()), Some(a.clone()), Some(b.clone()), Some(b.clone()), Some(c.clone())]);
    }
}
