//! The e-commerce tasks of the suite, and the shop they start from.

use serde_json::{Value, json};

use super::phrasing;
use toolenv_core::{Call, Check, Fact, Task, World, date::Date, slots};

fn world(state: Value) -> std::sync::Arc<World> {
    std::sync::Arc::new(World::new::<crate::ecommerce::State>(serde_json::from_value(state).expect("e-commerce task states are valid")))
}

/// The shop every task starts from: three past orders, so new orders begin at O-0004.
pub(super) fn shop() -> Value {
    json!({
        "products": {
            "SKU-101": {"name": "Aero Wireless Mouse", "category": "accessories", "price": 24.99, "stock": 40},
            "SKU-102": {"name": "Glide Wireless Mouse", "category": "accessories", "price": 19.99, "stock": 0},
            "SKU-103": {"name": "Pulse Wireless Mouse", "category": "accessories", "price": 21.50, "stock": 12},
            "SKU-104": {"name": "Pro Wired Mouse", "category": "accessories", "price": 12.99, "stock": 30},
            "SKU-105": {"name": "K2 Mechanical Keyboard", "category": "accessories", "price": 89.00, "stock": 8},
            "SKU-106": {"name": "USB-C Cable 2 m", "category": "accessories", "price": 9.99, "stock": 100},
            "SKU-201": {"name": "Trail Wireless Earbuds", "category": "audio", "price": 19.99, "stock": 25},
            "SKU-202": {"name": "Nova Wireless Earbuds", "category": "audio", "price": 34.99, "stock": 14},
            "SKU-203": {"name": "Basic Wired Earphones", "category": "audio", "price": 9.99, "stock": 50},
            "SKU-204": {"name": "Studio Over-Ear Headphones", "category": "audio", "price": 79.99, "stock": 5},
            "SKU-301": {"name": "Steel Electric Kettle 1.7 L", "category": "kitchen", "price": 32.00, "stock": 6},
            "SKU-302": {"name": "Compact Electric Kettle 1.0 L", "category": "kitchen", "price": 27.49, "stock": 9},
            "SKU-303": {"name": "Glass Electric Kettle 1.5 L", "category": "kitchen", "price": 44.90, "stock": 3},
            "SKU-304": {"name": "Stovetop Whistling Kettle", "category": "kitchen", "price": 18.99, "stock": 15}
        },
        "customers": {
            "C-201": {"name": "Maya Chen", "addresses": [
                {"label": "home", "address": "12 Elm Street, Springfield, IL 62704"},
                {"label": "work", "address": "400 Market Street, Suite 210, Springfield, IL 62701"}
            ]},
            "C-202": {"name": "Jonas Weber", "addresses": [
                {"label": "home", "address": "88 Harbor Road, Portland, ME 04101"},
                {"label": "work", "address": "2 Monument Square, Portland, ME 04101"}
            ]},
            "C-203": {"name": "Priya Nair", "addresses": [
                {"label": "home", "address": "5 Birch Lane, Austin, TX 78704"},
                {"label": "office", "address": "900 Congress Avenue, Floor 3, Austin, TX 78701"}
            ]},
            "C-204": {"name": "Sam Okafor", "addresses": [
                {"label": "home", "address": "27 Willow Court, Madison, WI 53703"}
            ]}
        },
        "coupons": {
            "SAVE10": {"percent_off": 10, "min_subtotal": 0, "expires": "2026-03-31"},
            "HOME5": {"amount_off": 5.00, "min_subtotal": 25.00, "expires": "2026-02-28"},
            "WINTER25": {"percent_off": 25, "min_subtotal": 0, "expires": "2026-01-15"},
            "TECH15": {"percent_off": 15, "min_subtotal": 50.00, "expires": "2026-01-31"},
            "BIG20": {"amount_off": 20.00, "min_subtotal": 150.00, "expires": "2026-06-30"}
        },
        "orders": {
            "O-0001": {
                "customer_id": "C-202",
                "items": [{"sku": "SKU-204", "quantity": 1, "unit_price": 84.99}],
                "subtotal": 84.99, "discount": 0, "total": 84.99, "coupon_code": null,
                "shipping_address": "88 Harbor Road, Portland, ME 04101",
                "status": "delivered", "delivered_on": "2025-12-02",
                "refunded": 0, "returned_skus": [], "returns": []
            },
            "O-0002": {
                "customer_id": "C-201",
                "items": [{"sku": "SKU-105", "quantity": 1, "unit_price": 89.00}],
                "subtotal": 89.00, "discount": 8.90, "total": 80.10, "coupon_code": "SAVE10",
                "shipping_address": "12 Elm Street, Springfield, IL 62704",
                "status": "shipped", "delivered_on": null,
                "refunded": 0, "returned_skus": [], "returns": []
            },
            "O-0003": {
                "customer_id": "C-202",
                "items": [
                    {"sku": "SKU-204", "quantity": 1, "unit_price": 79.99},
                    {"sku": "SKU-106", "quantity": 2, "unit_price": 9.99}
                ],
                "subtotal": 99.97, "discount": 15.00, "total": 84.97, "coupon_code": "TECH15",
                "shipping_address": "88 Harbor Road, Portland, ME 04101",
                "status": "delivered", "delivered_on": "2026-01-14",
                "refunded": 0, "returned_skus": [], "returns": []
            }
        }
    })
}

/// The verified e-commerce tasks.
pub(super) fn tasks() -> Vec<Task> {
    let today = Date::from_ymd(2026, 1, 20).expect("valid date");
    vec![
        Task {
            id: "ecommerce/simple-order/001".into(),
            domain: crate::registry::ECOMMERCE,
            level: 1,
            template: &phrasing::SIMPLE_ORDER,
            slots: slots(&[("quantity", "2"), ("product", "Aero Wireless Mouse"), ("sku", "SKU-101"), ("customer", "C-201")]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("get_customer", json!({"customer_id": "C-201"})),
                Call::new("check_inventory", json!({"sku": "SKU-101"})),
                Call::new(
                    "create_order",
                    json!({
                        "customer_id": "C-201",
                        "items": [{"sku": "SKU-101", "quantity": 2}],
                        "shipping_address": "12 Elm Street, Springfield, IL 62704"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one order for C-201: 2 x SKU-101, no coupon, to the home address",
                    "/orders",
                    json!({
                        "customer_id": "C-201",
                        "items": [{"sku": "SKU-101", "quantity": 2}],
                        "coupon_code": null,
                        "shipping_address": "12 Elm Street, Springfield, IL 62704"
                    }),
                    1,
                ),
                Check::equals("order O-0004 totals $49.98 (2 x $24.99)", "/orders/O-0004/total", json!(49.98)),
                Check::equals("SKU-101 stock down from 40 to 38", "/products/SKU-101/stock", json!(38)),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "ecommerce/cheapest-coupon/002".into(),
            domain: crate::registry::ECOMMERCE,
            level: 2,
            template: &phrasing::CHEAPEST_COUPON,
            slots: slots(&[("kind", "wireless mouse"), ("customer", "C-203"), ("label", "office"), ("coupon", "SAVE10")]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("search_products", json!({"query": "wireless mouse"})),
                Call::new("get_customer", json!({"customer_id": "C-203"})),
                Call::new("apply_coupon", json!({"code": "SAVE10", "order_subtotal": 21.50})),
                Call::new(
                    "create_order",
                    json!({
                        "customer_id": "C-203",
                        "items": [{"sku": "SKU-103", "quantity": 1}],
                        "shipping_address": "900 Congress Avenue, Floor 3, Austin, TX 78701",
                        "coupon_code": "SAVE10"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one order for C-203: 1 x SKU-103 (the cheapest wireless mouse in stock) with coupon SAVE10, to the office address",
                    "/orders",
                    json!({
                        "customer_id": "C-203",
                        "items": [{"sku": "SKU-103", "quantity": 1}],
                        "coupon_code": "SAVE10",
                        "shipping_address": "900 Congress Avenue, Floor 3, Austin, TX 78701"
                    }),
                    1,
                ),
                Check::equals("order O-0004 totals $19.35 ($21.50 less 10%)", "/orders/O-0004/total", json!(19.35)),
                Check::equals("SKU-103 stock down from 12 to 11", "/products/SKU-103/stock", json!(11)),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "ecommerce/cheapest-coupon/003".into(),
            domain: crate::registry::ECOMMERCE,
            level: 2,
            template: &phrasing::CHEAPEST_COUPON_003,
            slots: slots(&[("kind", "electric kettle"), ("customer", "C-204"), ("coupon_a", "WINTER25"), ("coupon_b", "HOME5")]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("search_products", json!({"query": "electric kettle"})),
                Call::new("get_customer", json!({"customer_id": "C-204"})),
                Call::new("apply_coupon", json!({"code": "HOME5", "order_subtotal": 27.49})),
                Call::new(
                    "create_order",
                    json!({
                        "customer_id": "C-204",
                        "items": [{"sku": "SKU-302", "quantity": 1}],
                        "shipping_address": "27 Willow Court, Madison, WI 53703",
                        "coupon_code": "HOME5"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one order for C-204: 1 x SKU-302 (the cheapest electric kettle) with the valid coupon HOME5",
                    "/orders",
                    json!({
                        "customer_id": "C-204",
                        "items": [{"sku": "SKU-302", "quantity": 1}],
                        "coupon_code": "HOME5",
                        "shipping_address": "27 Willow Court, Madison, WI 53703"
                    }),
                    1,
                ),
                Check::equals("order O-0004 totals $22.49 ($27.49 less $5.00)", "/orders/O-0004/total", json!(22.49)),
                Check::equals("SKU-302 stock down from 9 to 8", "/products/SKU-302/stock", json!(8)),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "ecommerce/simple-order/004".into(),
            domain: crate::registry::ECOMMERCE,
            level: 1,
            template: &phrasing::SIMPLE_ORDER_004,
            slots: slots(&[
                ("quantity", "3"),
                ("product", "Trail Wireless Earbuds"),
                ("sku", "SKU-201"),
                ("customer", "C-202"),
                ("coupon", "SAVE10"),
            ]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("get_customer", json!({"customer_id": "C-202"})),
                Call::new(
                    "create_order",
                    json!({
                        "customer_id": "C-202",
                        "items": [{"sku": "SKU-201", "quantity": 3}],
                        "shipping_address": "2 Monument Square, Portland, ME 04101",
                        "coupon_code": "SAVE10"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one order for C-202: 3 x SKU-201 with coupon SAVE10, to the work address",
                    "/orders",
                    json!({
                        "customer_id": "C-202",
                        "items": [{"sku": "SKU-201", "quantity": 3}],
                        "coupon_code": "SAVE10",
                        "shipping_address": "2 Monument Square, Portland, ME 04101"
                    }),
                    1,
                ),
                Check::equals("order O-0004 has a $6.00 discount (10% of $59.97)", "/orders/O-0004/discount", json!(6.00)),
                Check::equals("order O-0004 totals $53.97", "/orders/O-0004/total", json!(53.97)),
                Check::equals("SKU-201 stock down from 25 to 22", "/products/SKU-201/stock", json!(22)),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "ecommerce/return/005".into(),
            domain: crate::registry::ECOMMERCE,
            level: 2,
            template: &phrasing::RETURN,
            slots: slots(&[("customer", "C-202"), ("product", "Studio Over-Ear Headphones"), ("reason", "they are too tight")]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("list_orders", json!({"customer_id": "C-202"})),
                Call::new("check_order_status", json!({"order_id": "O-0003"})),
                Call::new(
                    "process_return",
                    json!({"order_id": "O-0003", "items": ["SKU-204"], "reason": "too tight", "refund_method": "original_payment"}),
                ),
            ],
            checks: vec![
                Check::equals(
                    "the headphones (SKU-204) of the recent order O-0003 are returned, and nothing else",
                    "/orders/O-0003/returned_skus",
                    json!(["SKU-204"]),
                ),
                Check::equals(
                    "O-0003 refunds $67.99: the headphones' $79.99 less their share of the $15.00 coupon discount",
                    "/orders/O-0003/refunded",
                    json!(67.99),
                ),
                Check::equals("O-0003 is partially returned", "/orders/O-0003/status", json!("partially_returned")),
                Check::equals(
                    "the refund goes to the original payment",
                    "/orders/O-0003/returns/0/refund_method",
                    json!("original_payment"),
                ),
                Check::equals("the old order O-0001, outside the return window, is untouched", "/orders/O-0001/status", json!("delivered")),
                Check::text(
                    "the return gives the customer's reason",
                    "/orders/O-0003/returns/0/reason",
                    [Fact::Says { label: "the reason", any_of: &["tight"] }],
                ),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
    ]
}
