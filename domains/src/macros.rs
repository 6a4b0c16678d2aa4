//! The registry of domains: the [`registry!`] invocation in `lib.rs` lists
//! each domain once, and everything that iterates domains or reaches a
//! domain's pieces is generated from that list.
//!
//! A domain is a folder whose `State` implements the engine's
//! [`toolenv_core::DomainState`] (tools, drifted shape, tasks, changes) and
//! the extension traits of the layers in this crate: the solver's
//! [`crate::solver::Strategy`], the perturbation engine's
//! [`crate::perturb::Lexicon`], the cheat corpus's
//! [`crate::cheats::UndoRules`] and the generator's
//! [`crate::generate::Generator`]. The registry names each of them for every
//! domain, so a domain that lacks a piece does not compile.

/// Generates the domains' handles (`SCHEDULING`, …), [`ALL`](crate::registry::ALL),
/// [`parse`](crate::registry::parse) and the per-domain dispatch of the
/// extension traits from the list of domains: `CONST => module`, where
/// `module` is the domain's folder, its name and the prefix of its task ids.
/// (The `pub mod` lines sit beside the invocation, not inside the macro, so
/// rustfmt finds the files.)
macro_rules! registry {
    ($($(#[doc = $doc:literal])+ $konst:ident => $module:ident,)+) => {
        /// The registry's domains: their handles, in registry order, and the
        /// dispatch of the extension traits each must implement.
        pub mod registry {
            use toolenv_core::{Domain, DomainDef, Task};

            #[allow(clippy::upper_case_acronyms)]
            enum Place {
                $($konst,)+
            }

            /// How many domains there are.
            pub const COUNT: usize = [$(stringify!($module)),+].len();

            static DEFS: [DomainDef; COUNT] =
                [$(DomainDef::of::<super::$module::State>(stringify!($module), Place::$konst as usize)),+];

            $(
                $(#[doc = $doc])+
                pub const $konst: Domain = Domain::new(&DEFS[Place::$konst as usize]);

                impl toolenv_core::Registered for super::$module::State {
                    const DOMAIN: Domain = $konst;
                }
            )+

            /// Every domain, in registry order.
            pub const ALL: [Domain; COUNT] = [$($konst),+];

            /// Parses a domain name (as [`Domain::name`] writes it).
            pub fn parse(name: &str) -> Option<Domain> {
                ALL.into_iter().find(|d| d.name() == name)
            }

            /// What the layers of this crate need of a domain, reached from
            /// its handle.
            pub(crate) trait Extensions {
                /// The domain's perturbation synonyms.
                fn synonyms(self) -> &'static [crate::perturb::Synonym];
                /// The domain's own distractor sentences.
                fn distractors(self) -> &'static [&'static str];
                /// How the domain's writes are undone.
                fn undo_rules(self) -> &'static [crate::cheats::Undo];
                /// Plays a task of the domain with the solver's strategy.
                fn solve(self, task: &Task, session: &mut crate::solver::Session<'_>) -> crate::solver::Step<()>;
                /// The generated task of an origin of the domain, drawn from `g`.
                fn generate(self, origin: crate::generate::Origin, g: crate::generate::Gen) -> Task;
                /// A state of the domain read from JSON (a task file's), with
                /// the path of what it gets wrong.
                fn world_of(self, state: serde_json::Value) -> Result<toolenv_core::World, crate::taskfile::StateError>;
            }

            impl Extensions for Domain {
                fn synonyms(self) -> &'static [crate::perturb::Synonym] {
                    const TABLE: [&[crate::perturb::Synonym]; COUNT] =
                        [$(<super::$module::State as crate::perturb::Lexicon>::SYNONYMS),+];
                    TABLE[self.index()]
                }

                fn distractors(self) -> &'static [&'static str] {
                    const TABLE: [&[&str]; COUNT] = [$(<super::$module::State as crate::perturb::Lexicon>::DISTRACTORS),+];
                    TABLE[self.index()]
                }

                fn undo_rules(self) -> &'static [crate::cheats::Undo] {
                    const TABLE: [&[crate::cheats::Undo]; COUNT] =
                        [$(<super::$module::State as crate::cheats::UndoRules>::UNDO),+];
                    TABLE[self.index()]
                }

                fn solve(self, task: &Task, session: &mut crate::solver::Session<'_>) -> crate::solver::Step<()> {
                    type Solve = fn(&Task, &mut crate::solver::Session<'_>) -> crate::solver::Step<()>;
                    const TABLE: [Solve; COUNT] = [$(<super::$module::State as crate::solver::Strategy>::solve),+];
                    TABLE[self.index()](task, session)
                }

                fn generate(self, origin: crate::generate::Origin, g: crate::generate::Gen) -> Task {
                    const TABLE: [fn(&crate::generate::Origin, crate::generate::Gen) -> Task; COUNT] =
                        [$(<super::$module::State as crate::generate::Generator>::generate),+];
                    TABLE[self.index()](&origin, g)
                }

                fn world_of(self, state: serde_json::Value) -> Result<toolenv_core::World, crate::taskfile::StateError> {
                    type Read = fn(serde_json::Value) -> Result<toolenv_core::World, crate::taskfile::StateError>;
                    const TABLE: [Read; COUNT] = [$(crate::taskfile::world_of::<super::$module::State>),+];
                    TABLE[self.index()](state)
                }
            }
        }
    };
}

pub(crate) use registry;
