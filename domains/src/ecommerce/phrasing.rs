//! How the perturbation layer may rephrase ecommerce tasks: each template's
//! alternative phrasings, and the domain's synonyms and distractor sentences.

use crate::{
    perturb::Synonym,
    perturb::lexicon::syn,
    perturb::templates::{P, R, S, V, VR, v},
};
use toolenv_core::{Fact, phrasing::Template};

/// Meaning-preserving replacements, longest phrases first where they overlap.
pub(super) const SYNONYMS: &[Synonym] = &[
    syn("Order", &["Purchase", "Buy"]),
    syn("shipped to", &["sent to", "delivered to"]),
    syn("coupon", &["discount code"]),
    syn("Find the cheapest", &["Look up the cheapest", "Search for the cheapest"]),
    syn("cheapest", &["least expensive", "lowest-priced"]),
    syn("customer", &["client"]),
    syn("Customer", &["Client"]),
    syn("wants to return", &["would like to return"]),
    syn("Refund it to", &["Send the refund to", "Issue the refund to"]),
    syn("original payment method", &["original form of payment"]),
];

/// Irrelevant sentences a distractor may add (besides the generic ones).
pub(super) const DISTRACTORS: &[&str] = &[
    "The warehouse inventory count took place on {past_date}; it does not affect this.",
    "Our spring catalog is still being designed.",
    "Customer satisfaction scores went up last quarter, by the way.",
];

pub(super) const SIMPLE_ORDER: Template = Template {
    text: "Order {quantity} of the {product} ({sku}) for customer {customer}, shipped to their home address.",
    variants: &[
        v(R, "For customer {customer}, order {quantity} of the {product} ({sku}), shipped to their home address."),
        v(R, "Order {quantity} of the {product} ({sku}), shipped to the home address of customer {customer}."),
        v(P, "Customer {customer} wants {quantity} of the {product} ({sku}) delivered to their home address; place that order."),
        v(
            P,
            "Please place an order of {quantity} units of the {product} ({sku}) for customer {customer} and ship it to their home address.",
        ),
        v(V, "{quantity} of the {product} ({sku}) should be ordered for customer {customer} and shipped to their home address."),
        v(VR, "For customer {customer}, {quantity} of the {product} ({sku}) should be ordered and shipped to their home address."),
        v(S, "Place an order for customer {customer}. It is for {quantity} of the {product} ({sku}). Ship it to their home address."),
    ],
};

pub(super) const CHEAPEST_COUPON: Template = Template {
    text: "Find the cheapest {kind} in stock and order one for customer {customer}, shipped to their {label} address, \
                with coupon {coupon}.",
    variants: &[
        v(
            R,
            "For customer {customer}, find the cheapest {kind} in stock and order one with coupon {coupon}, shipped to their {label} address.",
        ),
        v(
            R,
            "Using coupon {coupon}, find the cheapest {kind} in stock and order one for customer {customer}, shipped to their {label} address.",
        ),
        v(
            P,
            "Customer {customer} wants the lowest-priced {kind} in stock: order one, apply coupon {coupon}, and ship it to their {label} address.",
        ),
        v(
            P,
            "Look up the cheapest {kind} in stock and place an order of one for customer {customer} with coupon {coupon}, delivered to their {label} address.",
        ),
        v(
            V,
            "The cheapest {kind} in stock should be found and one ordered for customer {customer}, shipped to their {label} address, with coupon {coupon}.",
        ),
        v(
            S,
            "Find the cheapest {kind} in stock. Order one for customer {customer}. Ship it to their {label} address and use coupon {coupon}.",
        ),
    ],
};

pub(super) const CHEAPEST_COUPON_003: Template = Template {
    text: "Find the cheapest {kind} and order one for customer {customer}, shipped to their home address. \
                They have two coupons, {coupon_a} and {coupon_b}; an order takes only one, so use the one that is valid.",
    variants: &[
        v(
            R,
            "Customer {customer} has two coupons, {coupon_a} and {coupon_b}; an order takes only one, so use the one that is \
             valid. Find the cheapest {kind} and order one for them, shipped to their home address.",
        ),
        v(
            R,
            "Find the cheapest {kind} and order one for customer {customer}, shipped to their home address. They have two coupons, \
             {coupon_b} and {coupon_a}; an order takes only one, so use the one that is valid.",
        ),
        v(
            P,
            "Order the lowest-priced {kind}, one unit, for customer {customer} and ship it to their home address. They hold two \
             coupons, {coupon_a} and {coupon_b}, but only one can go on an order, so apply whichever is valid.",
        ),
        v(
            P,
            "Customer {customer} wants a single unit of the cheapest {kind}, delivered to their home address. They hold the \
             coupons {coupon_a} and {coupon_b}, and since an order accepts just one, apply the valid one.",
        ),
        v(
            V,
            "The cheapest {kind} should be found and one ordered for customer {customer}, shipped to their home address. Two \
             coupons, {coupon_a} and {coupon_b}, are held by them; only one can be used per order, so the valid one should be used.",
        ),
        v(
            S,
            "Find the cheapest {kind}. Order one for customer {customer}, shipped to their home address. They have two coupons: \
             {coupon_a} and {coupon_b}. An order takes only one, so use the one that is valid.",
        ),
    ],
};

pub(super) const SIMPLE_ORDER_004: Template = Template {
    text: "Order {quantity} {product} ({sku}) for customer {customer} with coupon {coupon}, shipped to their work address.",
    variants: &[
        v(R, "For customer {customer}, order {quantity} {product} ({sku}) with coupon {coupon}, shipped to their work address."),
        v(R, "Order {quantity} {product} ({sku}) for customer {customer}, shipped to their work address, with coupon {coupon}."),
        v(P, "Customer {customer} wants {quantity} {product} ({sku}) sent to their work address; place the order with coupon {coupon}."),
        v(
            P,
            "Please place an order for customer {customer}: {quantity} {product} ({sku}), coupon {coupon}, delivered to their work address.",
        ),
        v(
            V,
            "{quantity} {product} ({sku}) should be ordered for customer {customer} with coupon {coupon} and shipped to their work address.",
        ),
        v(S, "Place an order for customer {customer}: {quantity} {product} ({sku}). Apply coupon {coupon}. Ship it to their work address."),
    ],
};

pub(super) const RETURN: Template = Template {
    text: "Customer {customer} wants to return the {product} from their recent order because {reason}. \
                Refund it to the original payment method.",
    variants: &[
        v(
            R,
            "Because {reason}, customer {customer} wants to return the {product} from their recent order. Refund it to the original payment method.",
        ),
        v(
            P,
            "Customer {customer} is sending back the {product} from their recent order because {reason}; process the return \
             and refund the original payment method.",
        ),
        v(
            P,
            "Customer {customer} would like to send back the {product} from their recent order, as {reason}. Refund it to the \
             original payment method.",
        ),
        v(
            V,
            "A return should be processed for the {product} from the recent order of customer {customer}, because {reason}. The \
             refund should go to the original payment method.",
        ),
        v(
            S,
            "Customer {customer} wants to return the {product} from their recent order because {reason}, with the refund going to \
             the original payment method.",
        ),
    ],
};

// The generator's words (`generate.rs`): names its records draw from, and its tasks' templates.

pub(super) const BRANDS: [&str; 15] =
    ["Aero", "Glide", "Pulse", "Nova", "Trail", "Studio", "Zen", "Volt", "Orbit", "Echo", "Lumen", "Apex", "Flux", "Terra", "Nimbus"];
/// Product types by category.
pub(super) const TYPES: [(&str, &[&str]); 4] = [
    ("accessories", &["Wireless Mouse", "Wired Mouse", "Mechanical Keyboard", "Laptop Stand", "Webcam", "USB-C Hub"]),
    ("audio", &["Wireless Earbuds", "Over-Ear Headphones", "Bluetooth Speaker", "Wired Earphones"]),
    ("kitchen", &["Electric Kettle", "Toaster", "Coffee Grinder", "Hand Blender"]),
    ("home", &["Desk Lamp", "Air Purifier", "Smart Plug", "Door Sensor"]),
];
/// What makes a near-duplicate of a product's name.
pub(super) const VARIANTS: [&str; 4] = [" Pro", " Mini", " 2", " Plus"];
pub(super) const FIRST: [&str; 14] =
    ["Maya", "Jonas", "Priya", "Sam", "Lena", "Omar", "Sofia", "Chen", "Amara", "Lucas", "Nadia", "Pavel", "Grace", "Hugo"];
pub(super) const LAST: [&str; 12] =
    ["Chen", "Weber", "Nair", "Okafor", "Fischer", "Haddad", "Rossi", "Berg", "Diallo", "Silva", "Novak", "Moreau"];
pub(super) const STREETS: [&str; 10] = [
    "Elm Street",
    "Harbor Road",
    "Birch Lane",
    "Willow Court",
    "Market Street",
    "Oak Avenue",
    "Lake Drive",
    "Main Street",
    "Hill Road",
    "Park Lane",
];
pub(super) const CITIES: [&str; 6] =
    ["Springfield, IL 62704", "Portland, ME 04101", "Austin, TX 78704", "Madison, WI 53703", "Denver, CO 80203", "Salem, OR 97301"];
/// Reasons for a return, with the words a return's reason must keep.
pub(super) const REASONS: [(&str, &str); 5] = [
    ("they are too tight", "tight"),
    ("it stopped working", "stopped working"),
    ("the color is wrong", "color"),
    ("it is too loud", "loud"),
    ("it arrived scratched", "scratched"),
];

pub(super) const MULTI_5: Template = Template::plain(
    "Place one order for customer {customer}, shipped to their {label} address: {q1} of the {p1}, {q2} of the {p2}, {q3} of \
     the {p3}, {q4} of the {p4} and {q5} of the {p5}. Where fewer units are in stock than asked, order all that are left, and \
     leave out a product with none left. Use coupon {coupon} if the order qualifies for it, and otherwise no coupon.",
);
pub(super) const MULTI_6: Template = Template::plain(
    "Place one order for customer {customer}, shipped to their {label} address: {q1} of the {p1}, {q2} of the {p2}, {q3} of \
     the {p3}, {q4} of the {p4}, {q5} of the {p5} and {q6} of the {p6}. Where fewer units are in stock than asked, order all \
     that are left, and leave out a product with none left. Use coupon {coupon} if the order qualifies for it, and otherwise \
     no coupon.",
);
pub(super) const PARTIAL_RETURN: Template = Template::plain(
    "Customer {customer} wants to return the {product1} and the {product2} from order {order_id} because {reason}. Refund \
     them as store credit.",
);
pub(super) const SKU_QUESTION: Template =
    Template::plain("Which sku is the {product}, what does one cost, and how many are in stock? Answer with all three, and order nothing.");
pub(super) const LATE_RETURN: Template = Template::plain(
    "Customer {customer} wants to return the {product} from order {order_id} because {reason}. Do it if our 30-day return \
     policy allows it; if it does not, change nothing and tell them why.",
);

/// An answer saying the return window has closed.
pub(super) const WINDOW_CLOSED: Fact = Fact::Says {
    label: "that the 30-day return window has closed",
    any_of: &["30 days", "30 day", "thirty days", "return window", "window", "too late", "expired", "more than 30"],
};
