//! The catalog tools: searching products and checking one's stock.

use std::collections::BTreeSet;

use super::{amount, text};
use crate::ecommerce::views::{Inventory, ProductView, Search};
use crate::ecommerce::{MAX_SEARCH_RESULTS, Product, State};
use crate::json::Seq;
use crate::tool::{Args, DomainError, echo};
use crate::world::{Context, Reply};

pub(super) fn search_products(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let words: Vec<String> = text(args, "query")?.split_whitespace().map(str::to_lowercase).collect();
    let category = text(args, "category")?;
    if !category.is_empty() && !s.products.values().any(|p| p.category.eq_ignore_ascii_case(category)) {
        let known: BTreeSet<&str> = s.products.values().map(|p| p.category.as_str()).collect();
        let known: Vec<&str> = known.into_iter().collect();
        return Err(DomainError::new("UNKNOWN_CATEGORY", format!("no category '{}'; categories: {}", echo(category), known.join(", "))));
    }
    let min = amount(args, "min_price")?;
    let max = amount(args, "max_price")?;
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        return Err(DomainError::new("INVALID_RANGE", format!("min_price {min} is above max_price {max}")));
    }
    let matching: Vec<(&String, &Product)> = s
        .products
        .iter()
        .filter(|(_, p)| category.is_empty() || p.category.eq_ignore_ascii_case(category))
        .filter(|(_, p)| min.is_none_or(|m| p.price >= m) && max.is_none_or(|m| p.price <= m))
        .filter(|(sku, p)| {
            // A word has no space, so it never spans two of the product's texts.
            let found = |word: &str| [sku.as_str(), &p.name, &p.category].into_iter().any(|text| contains_folded(text, word));
            words.iter().all(|w| found(w) || w.strip_suffix('s').is_some_and(found))
        })
        .collect();
    let products = Seq(|| {
        matching.iter().take(MAX_SEARCH_RESULTS).map(|&(sku, p)| ProductView {
            category: &p.category,
            in_stock: p.stock > 0,
            name: &p.name,
            price: p.price,
            sku,
            stock: p.stock,
        })
    });
    Ok(Reply::read(&Search { count: matching.len(), products, truncated: matching.len() > MAX_SEARCH_RESULTS }))
}

/// Whether `text`, lowercased, contains `word` (lowercase): without a
/// lowercased copy when both are ASCII.
fn contains_folded(text: &str, word: &str) -> bool {
    if !(text.is_ascii() && word.is_ascii()) {
        return text.to_lowercase().contains(word);
    }
    word.is_empty() || text.as_bytes().windows(word.len()).any(|window| window.eq_ignore_ascii_case(word.as_bytes()))
}

pub(super) fn check_inventory(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (sku, product) = s.product(text(args, "sku")?)?;
    Ok(Reply::read(&Inventory { in_stock: product.stock > 0, name: &product.name, price: product.price, sku, stock: product.stock }))
}
