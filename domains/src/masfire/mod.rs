//! MAS-FIRE above the engine: the teams that play multi-agent episodes and
//! the rules that judge what became of each injected fault. The fault types,
//! profiles and their injection at the environment's boundary are the
//! engine's (`toolenv_core::masfire`).

pub mod judge;
pub mod team;

#[cfg(test)]
mod tests;
