//! The ecommerce task generator.

use crate::Task;
use crate::generate::Origin;

/// The generated ecommerce task of an origin.
pub(super) fn generate(origin: &Origin) -> Task {
    todo!("{origin:?}")
}
