//! The catalog tools: searching products and checking one's stock.

use std::collections::BTreeSet;

use super::{amount, text};
use crate::{
    ecommerce::views::{Inventory, ProductView, Search},
    ecommerce::{MAX_SEARCH_RESULTS, Product, State},
};
use toolenv_core::{Args, Context, DomainError, Reply, echo, json::Seq};

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
    // Each product's text is lowercased into one buffer, not a string of its own.
    let mut haystack = String::new();
    let matching: Vec<(&String, &Product)> = s
        .products
        .iter()
        .map(|(sku, p)| (sku, &**p))
        .filter(|(_, p)| category.is_empty() || p.category.eq_ignore_ascii_case(category))
        .filter(|(_, p)| min.is_none_or(|m| p.price >= m) && max.is_none_or(|m| p.price <= m))
        .filter(|(sku, p)| {
            if words.is_empty() {
                return true;
            }
            haystack.clear();
            for (i, part) in [sku.as_str(), &p.name, &p.category].into_iter().enumerate() {
                if i > 0 {
                    haystack.push(' ');
                }
                haystack.push_str(part);
            }
            if haystack.is_ascii() {
                haystack.make_ascii_lowercase();
            } else {
                haystack = haystack.to_lowercase();
            }
            words.iter().all(|w| haystack.contains(w.as_str()) || w.strip_suffix('s').is_some_and(|stem| haystack.contains(stem)))
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

pub(super) fn check_inventory(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (sku, product) = s.product(text(args, "sku")?)?;
    Ok(Reply::read(&Inventory { in_stock: product.stock > 0, name: &product.name, price: product.price, sku, stock: product.stock }))
}
