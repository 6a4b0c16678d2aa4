//! Wire conversions of multi-agent episodes and MAS-FIRE faults.

use crate::pb;
use toolenv_core::{
    masfire::MasOutcome,
    masfire::{Injection, MasFault, MasProfile, MasProfileError},
};

impl From<&toolenv_core::RoleSpec> for pb::Role {
    fn from(role: &toolenv_core::RoleSpec) -> Self {
        pb::Role { name: role.name.clone(), prompt: role.prompt.clone() }
    }
}

impl pb::Role {
    /// The domain's role.
    pub fn to_domain(&self) -> toolenv_core::RoleSpec {
        toolenv_core::RoleSpec::new(self.name.clone(), self.prompt.clone())
    }
}

impl From<&MasProfile> for pb::MasFaultProfile {
    fn from(profile: &MasProfile) -> Self {
        pb::MasFaultProfile {
            faults: profile.faults.iter().map(|f| f.name().to_owned()).collect(),
            rate: profile.rate,
            roles: profile.roles.clone(),
            storm_copies: Some(profile.storm_copies),
            bulk_bytes: Some(profile.bulk_bytes),
        }
    }
}

impl pb::MasFaultProfile {
    /// The domain's profile, validated.
    pub fn to_domain(&self) -> Result<MasProfile, MasProfileError> {
        let mut profile = MasProfile::new(&self.faults, self.rate)?;
        profile.roles.clone_from(&self.roles);
        if let Some(copies) = self.storm_copies {
            profile.storm_copies = copies;
        }
        if let Some(bytes) = self.bulk_bytes {
            profile.bulk_bytes = bytes;
        }
        profile.validate()?;
        Ok(profile)
    }
}

impl From<&Injection> for pb::MasInjection {
    fn from(injection: &Injection) -> Self {
        pb::MasInjection {
            fault: injection.fault().name().to_owned(),
            detail_json: toolenv_core::json::canonical(&serde_json::to_value(injection).unwrap_or_default()),
        }
    }
}

impl From<&MasOutcome> for pb::MasFaultOutcome {
    fn from(outcome: &MasOutcome) -> Self {
        pb::MasFaultOutcome {
            fault: outcome.fault.name().to_owned(),
            call_index: outcome.call,
            agent_id: outcome.agent.clone().unwrap_or_default(),
            role: outcome.role.clone().unwrap_or_default(),
            detected: outcome.detected,
            fixed: outcome.fixed,
        }
    }
}

impl pb::MasFaultOutcome {
    /// The domain's outcome; `None` for a fault type this version does not know.
    pub fn to_domain(&self) -> Option<MasOutcome> {
        Some(MasOutcome {
            fault: MasFault::parse(&self.fault)?,
            call: self.call_index,
            agent: (!self.agent_id.is_empty()).then(|| self.agent_id.clone()),
            role: (!self.role.is_empty()).then(|| self.role.clone()),
            detected: self.detected,
            fixed: self.fixed,
        })
    }
}

fn injection_json(injection: &pb::MasInjection) -> serde_json::Value {
    serde_json::from_str(&injection.detail_json).unwrap_or_else(|_| serde_json::json!({"fault": injection.fault}))
}

/// Adds a call's multi-agent fields to its JSON form (only when present, so
/// a single-agent trajectory's JSON is unchanged).
pub(crate) fn call_json(call: &pb::ToolCallRecord, json: &mut serde_json::Value) {
    if !call.agent_id.is_empty() {
        json["agent_id"] = serde_json::Value::from(call.agent_id.as_str());
    }
    if !call.role.is_empty() {
        json["role"] = serde_json::Value::from(call.role.as_str());
    }
    if !call.mas_faults.is_empty() {
        json["mas_faults"] = call.mas_faults.iter().map(injection_json).collect();
    }
}

/// Adds a verdict's MAS-FIRE outcomes to its JSON form, when there are any.
pub(crate) fn verdict_json(verdict: &pb::Verdict, json: &mut serde_json::Value) {
    if !verdict.mas_faults.is_empty() {
        json["mas_faults"] = verdict
            .mas_faults
            .iter()
            .map(|o| serde_json::json!({"fault": o.fault, "call_index": o.call_index, "agent_id": o.agent_id, "role": o.role, "detected": o.detected, "fixed": o.fixed}))
            .collect();
    }
}

/// Adds a trajectory's roles, MAS-FIRE profile and prompt faults to its JSON form, when there are any.
pub(crate) fn trajectory_json(trajectory: &pb::Trajectory, json: &mut serde_json::Value) {
    if !trajectory.roles.is_empty() {
        json["roles"] = trajectory.roles.iter().map(|r| serde_json::json!({"name": r.name, "prompt": r.prompt})).collect();
    }
    if let Some(profile) = &trajectory.mas_profile {
        json["mas_profile"] = serde_json::json!({"faults": profile.faults, "rate": profile.rate, "roles": profile.roles,
            "storm_copies": profile.storm_copies, "bulk_bytes": profile.bulk_bytes});
    }
    if !trajectory.prompt_faults.is_empty() {
        json["prompt_faults"] = trajectory.prompt_faults.iter().map(injection_json).collect();
    }
}
