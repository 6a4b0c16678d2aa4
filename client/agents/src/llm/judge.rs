//! An LLM as the judge of prose answers: an option beside the rule-based
//! reader (the default). The question is the core's
//! ([`toolenv_core::ruling::question`]: the request, a right answer, what a
//! right answer states, the answer fenced off); the reply is read by
//! [`toolenv_core::ruling::read_reply`]. The server asks it once per finish
//! and keeps the ruling in the trajectory, so replays need no model.

use serde_json::{Value, json};
use toolenv_core::{AnswerRuling, JudgeQuestion};

use super::{ModelEndpoint, Sampling};

/// The judge's sampling: deterministic where the endpoint allows.
pub const JUDGE_SAMPLING: Sampling = Sampling { temperature: Some(0.0), top_p: None, max_tokens: Some(256), seed: Some(0) };

/// A judge: a model behind an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct LlmJudge {
    /// The model as the endpoint names it.
    pub model: String,
    /// Where the model is served.
    pub endpoint: ModelEndpoint,
}

impl LlmJudge {
    /// A judge on `model` at `endpoint`, sampled with [`JUDGE_SAMPLING`].
    pub fn new(model: impl Into<String>, endpoint: ModelEndpoint) -> Self {
        LlmJudge { model: model.into(), endpoint }
    }

    /// The chat-completions request that puts `question` to the model.
    pub fn request(&self, question: &JudgeQuestion) -> Value {
        let mut request = json!({"model": self.model, "messages": [
            {"role": "system", "content": question.system},
            {"role": "user", "content": question.user},
        ]});
        if let (Value::Object(request), Value::Object(sampling)) = (&mut request, JUDGE_SAMPLING.to_json()) {
            request.extend(sampling);
        }
        request
    }

    /// The model's ruling, or why there is none: the endpoint failed, or
    /// its reply holds no ruling.
    pub async fn rule(&self, question: &JudgeQuestion) -> Result<AnswerRuling, String> {
        // A recording names the exchange by what was asked: the same question, the same file.
        let key = format!("judge/{:016x}", fnv1a(question.system.bytes().chain(question.user.bytes())));
        let reply = self.endpoint.complete(&key, &self.request(question)).await.map_err(|e| e.to_string())?;
        let text = reply.pointer("/choices/0/message/content").and_then(Value::as_str).unwrap_or_default();
        toolenv_core::ruling::read_reply(&format!("model {}", self.model), super::user::without_reasoning(text)).map_err(|e| e.to_string())
    }
}

/// FNV-1a, 64 bits: a stable name for a question (not a security measure).
fn fnv1a(bytes: impl Iterator<Item = u8>) -> u64 {
    bytes.fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}
