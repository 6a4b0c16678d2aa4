//! The support task generator.

use crate::Task;
use crate::generate::Origin;

/// The generated support task of an origin.
pub(super) fn generate(origin: &Origin) -> Task {
    todo!("{origin:?}")
}
