//! How the solver plays e-commerce tasks: from the task's slots, the catalog
//! search, the customer's addresses, coupon checks and the order history.

use serde_json::{Value, json};

use crate::solver::{GiveUp, Session, Step, Strategy, Usable, accepted, field, kind, list_at, slot, unknown};
use toolenv_core::Task;

impl Strategy for super::State {
    fn solve(task: &Task, s: &mut Session<'_>) -> Step<()> {
        match kind(task) {
            // "Order {quantity} (of the) {product} ({sku}) for customer {customer} [with coupon
            // {coupon}], shipped to their home/work address."
            "simple-order" => {
                let customer = slot(task, "customer")?;
                let quantity: u64 = slot(task, "quantity")?.parse().map_err(|_| GiveUp::Stuck("quantity is not a number".into()))?;
                let address = address(s, customer, &label(task)?)?;
                let coupon = task.slot("coupon");
                order(s, customer, slot(task, "sku")?, quantity, &address, coupon)
            }
            // "Find the cheapest {kind} and order one for customer {customer}, shipped to their
            // {label} address, with coupon {coupon}" — or with whichever of {coupon_a} and
            // {coupon_b} is valid.
            "cheapest-coupon" => {
                let customer = slot(task, "customer")?;
                let products = cheapest_in_stock(s, slot(task, "kind")?)?;
                let address = address(s, customer, &label(task)?)?;
                for (sku, price) in products {
                    let coupon = match task.slot("coupon") {
                        Some(coupon) => coupon.to_owned(),
                        None => valid_coupon(s, &[slot(task, "coupon_a")?, slot(task, "coupon_b")?], price)?,
                    };
                    match create_order(s, customer, &sku, 1, &address, Some(&coupon))? {
                        Usable::Ok(_) => return Ok(()),
                        // Sold out since the search: the next cheapest.
                        Usable::Rejected(code, _) if code == "OUT_OF_STOCK" || code == "INSUFFICIENT_STOCK" => {}
                        rejected => return accepted("create_order", rejected).map(drop),
                    }
                }
                Err(GiveUp::Stuck("no product left in stock".into()))
            }
            // "Customer {customer} wants to return the {product} from their recent order because
            // {reason}. Refund it to the original payment method."
            "return" => {
                let (customer, product) = (slot(task, "customer")?, slot(task, "product")?);
                let today = task.today.to_string();
                for (order_id, sku) in returnable(s, customer, product, &today)? {
                    let args = json!({
                        "order_id": order_id, "items": [sku], "reason": slot(task, "reason")?, "refund_method": "original_payment"
                    });
                    match s.write("process_return", args)? {
                        Usable::Ok(_) => return Ok(()),
                        Usable::Rejected(code, _) if code == "RETURN_WINDOW_CLOSED" => {}
                        rejected => return accepted("process_return", rejected).map(drop),
                    }
                }
                Err(GiveUp::Stuck(format!("no order of {customer} with a returnable {product}")))
            }
            // "Place one order for customer {customer}, shipped to their {label} address: {q1} of the {p1}, …
            // Where fewer units are in stock than asked, order all that are left, and leave out a product with none
            // left. Use coupon {coupon} if the order qualifies for it, and otherwise no coupon."
            "multi-order" => {
                let customer = slot(task, "customer")?;
                let address = address(s, customer, &label(task)?)?;
                let mut lines = Vec::new();
                let mut subtotal_cents = 0;
                for (q, p) in [("q1", "p1"), ("q2", "p2"), ("q3", "p3"), ("q4", "p4"), ("q5", "p5"), ("q6", "p6")] {
                    let (Some(quantity), Some(name)) = (task.slot(q), task.slot(p)) else { break };
                    let quantity: u64 = quantity.parse().map_err(|_| GiveUp::Stuck(format!("{q} is not a number")))?;
                    let (sku, price_cents, stock) = product_named(s, name)?;
                    let take = quantity.min(stock);
                    if take > 0 {
                        lines.push(json!({"sku": sku, "quantity": take}));
                        subtotal_cents += take * price_cents;
                    }
                }
                let coupon = slot(task, "coupon")?;
                let check = s.read("apply_coupon", json!({"code": coupon, "order_subtotal": subtotal_cents as f64 / 100.0}))?;
                let valid = matches!(&check, Usable::Ok(v) if v.get("valid") == Some(&Value::Bool(true)));
                let mut args = json!({"customer_id": customer, "items": lines, "shipping_address": address});
                if valid {
                    args["coupon_code"] = json!(coupon);
                }
                accepted("create_order", s.write("create_order", args)?).map(drop)
            }
            // "Customer {customer} wants to return the {product1} and the {product2} from order {order_id} because
            // {reason}. Refund them as store credit."
            "partial-return" => {
                let order = slot(task, "order_id")?;
                let wanted = [slot(task, "product1")?, slot(task, "product2")?];
                let find = |v: &Value| -> Option<Vec<String>> {
                    let lines = list_at(v, "/order/items");
                    wanted.iter().map(|name| lines.iter().find(|l| field(l, "name") == *name).map(|l| field(l, "sku").to_owned())).collect()
                };
                let answer = s.read_if("check_order_status", json!({"order_id": order}), &|v| find(v).is_some())?;
                let skus = find(&accepted("check_order_status", answer)?).unwrap_or_default();
                let args = json!({"order_id": order, "items": skus, "reason": slot(task, "reason")?, "refund_method": "store_credit"});
                accepted("process_return", s.write("process_return", args)?).map(drop)
            }
            // "Which sku is the {product}, what does one cost, and how many are in stock? …"
            "sku-question" => {
                let name = slot(task, "product")?;
                let (sku, cents, stock) = product_named(s, name)?;
                s.answer(&format!("The {name} is {sku}; it costs ${}.{:02} and {stock} are in stock.", cents / 100, cents % 100));
                Ok(())
            }
            // "Customer {customer} wants to return the {product} from order {order_id} because {reason}. Do it if our
            // 30-day return policy allows it; if it does not, change nothing and tell them why."
            "late-return" => {
                let (order, name) = (slot(task, "order_id")?, slot(task, "product")?);
                let has_line = |v: &Value| list_at(v, "/order/items").iter().any(|l| field(l, "name") == name);
                let answer = s.read_if("check_order_status", json!({"order_id": order}), &has_line)?;
                let status = accepted("check_order_status", answer)?;
                let until = status.pointer("/order/returnable_until").and_then(Value::as_str).unwrap_or_default();
                if until < task.today.to_string().as_str() {
                    s.answer(&format!(
                        "I changed nothing: order {order} was delivered more than 30 days ago, so the return window has closed."
                    ));
                    return Ok(());
                }
                let sku = list_at(&status, "/order/items").iter().find(|l| field(l, "name") == name).map(|l| field(l, "sku").to_owned());
                let args = json!({"order_id": order, "items": [sku], "reason": slot(task, "reason")?, "refund_method": "original_payment"});
                accepted("process_return", s.write("process_return", args)?).map(drop)
            }
            _ => Err(unknown(task)),
        }
    }
}

/// The (sku, price in cents, stock) of the product with exactly this name,
/// from a catalog search for it (near-duplicate names match the search too).
fn product_named(s: &mut Session<'_>, name: &str) -> Step<(String, u64, u64)> {
    let find = |v: &Value| {
        list_at(v, "/products").iter().find(|p| field(p, "name") == name).and_then(|p| {
            let cents = (p.get("price")?.as_f64()? * 100.0).round() as u64;
            Some((field(p, "sku").to_owned(), cents, p.get("stock")?.as_u64()?))
        })
    };
    let answer = s.read_page("search_products", json!({"query": name}), &|v| find(v).is_some())?;
    find(&accepted("search_products", answer)?).ok_or_else(|| GiveUp::Stuck(format!("no product named '{name}'")))
}

/// The label of the address the task ships to: its `label` slot, or the word
/// before "address" in its description ("shipped to their home address").
fn label(task: &Task) -> Step<String> {
    if let Some(label) = task.slot("label") {
        return Ok(label.to_owned());
    }
    let description = task.description();
    let before = description.find(" address").map(|at| &description[..at]);
    before.and_then(|text| text.rsplit(' ').next()).map(str::to_owned).ok_or_else(|| GiveUp::Stuck("no address label".into()))
}

/// The customer's address with `label`, read again until the list shows it.
fn address(s: &mut Session<'_>, customer: &str, label: &str) -> Step<String> {
    let find = |v: &Value| list_at(v, "/addresses").iter().find(|a| field(a, "label") == label).map(|a| field(a, "address").to_owned());
    let answer = s.read_if("get_customer", json!({"customer_id": customer}), &|v| find(v).is_some())?;
    find(&accepted("get_customer", answer)?).ok_or_else(|| GiveUp::Stuck(format!("{customer} has no {label} address")))
}

fn create_order(s: &mut Session<'_>, customer: &str, sku: &str, quantity: u64, address: &str, coupon: Option<&str>) -> Step<Usable> {
    let mut args = json!({"customer_id": customer, "items": [{"sku": sku, "quantity": quantity}], "shipping_address": address});
    if let Some(coupon) = coupon {
        args["coupon_code"] = json!(coupon);
    }
    s.write("create_order", args)
}

fn order(s: &mut Session<'_>, customer: &str, sku: &str, quantity: u64, address: &str, coupon: Option<&str>) -> Step<()> {
    accepted("create_order", create_order(s, customer, sku, quantity, address, coupon)?).map(drop)
}

/// The products matching `kind` that are in stock, cheapest first (ties in
/// catalog order), with their prices. The search says how many products
/// match, so a list cut short shows; whenever fewer are shown than match (a
/// cut, or a page limit), the search is narrowed below the cheapest price in
/// stock found so far, until every match under the cap is shown.
fn cheapest_in_stock(s: &mut Session<'_>, kind: &str) -> Step<Vec<(String, f64)>> {
    let mut found: Vec<(String, f64)> = Vec::new();
    let mut max_price: Option<f64> = None;
    for _ in 0..crate::solver::MAX_ATTEMPTS {
        let mut args = json!({"query": kind});
        if let Some(max) = max_price {
            args["max_price"] = json!(max);
        }
        // The result's own `truncated` marks a page limit; `count` tells a cut list apart.
        let counted = |v: &Value| v.get("count").and_then(Value::as_u64).is_some_and(|n| list_at(v, "/products").len() as u64 <= n);
        let page = accepted("search_products", s.read_page("search_products", args, &counted)?)?;
        let products = list_at(&page, "/products");
        for product in products {
            let in_stock = product.get("stock").and_then(Value::as_u64).is_some_and(|n| n > 0);
            let sku = field(product, "sku");
            if let (true, Some(price)) = (in_stock, product.get("price").and_then(Value::as_f64))
                && !found.iter().any(|(known, _)| known == sku)
            {
                found.push((sku.to_owned(), price));
            }
        }
        if products.len() as u64 == page.get("count").and_then(Value::as_u64).unwrap_or(0) {
            // Every match under the price cap is seen.
            found.sort_by(|a, b| a.1.total_cmp(&b.1));
            return if found.is_empty() { Err(GiveUp::Stuck(format!("no {kind} in stock"))) } else { Ok(found) };
        }
        // Matches not shown (a page limit, or a cut): only cheaper ones than the best so far matter.
        let cheapest = found.iter().map(|(_, p)| *p).fold(f64::INFINITY, f64::min);
        if cheapest.is_finite() {
            max_price = Some(((cheapest - 0.01) * 100.0).round() / 100.0);
        }
    }
    Err(GiveUp::Exhausted("search_products".into()))
}

/// The first of `coupons` the shop accepts on an order of `subtotal`.
fn valid_coupon(s: &mut Session<'_>, coupons: &[&str], subtotal: f64) -> Step<String> {
    for code in coupons {
        let answer = s.read("apply_coupon", json!({"code": code, "order_subtotal": subtotal}))?;
        if let Usable::Ok(check) = answer
            && check.get("valid") == Some(&Value::Bool(true))
        {
            return Ok((*code).to_owned());
        }
    }
    Err(GiveUp::Stuck(format!("none of the coupons {coupons:?} is valid")))
}

/// The customer's orders with a `product` line that can still be returned,
/// most recently delivered first, with that line's sku. The order list is
/// read again until it shows one.
fn returnable(s: &mut Session<'_>, customer: &str, product: &str, today: &str) -> Step<Vec<(String, String)>> {
    let find = |v: &Value| -> Vec<(String, String, String)> {
        let mut orders: Vec<(String, String, String)> = list_at(v, "/orders")
            .iter()
            .filter(|o| matches!(field(o, "status"), "delivered" | "partially_returned"))
            .filter(|o| field(o, "returnable_until") >= today)
            .filter_map(|o| {
                let line = list_at(o, "/items").iter().find(|l| field(l, "name") == product)?;
                let sku = field(line, "sku");
                let returned = list_at(o, "/returned_skus").iter().any(|r| r.as_str() == Some(sku));
                (!returned).then(|| (field(o, "delivered_on").to_owned(), field(o, "order_id").to_owned(), sku.to_owned()))
            })
            .collect();
        orders.sort_by(|a, b| b.0.cmp(&a.0));
        orders
    };
    let answer = s.read_if("list_orders", json!({"customer_id": customer}), &|v| !find(v).is_empty())?;
    Ok(find(&accepted("list_orders", answer)?).into_iter().map(|(_, id, sku)| (id, sku)).collect())
}
