//! The flow shop's flows (`fixtures/sites/flowshop/`), written as the
//! person would have recorded them, for the replay e2e test and the
//! `flows` benchmark; and `chaperone flow import` of one.

use serde_json::{Value, json};

/// A descriptor: role, accessible name, locators.
pub fn target(role: &str, name: &str, locators: Value) -> Value {
    json!({ "role": role, "name": name, "locators": locators })
}

/// An `id` locator.
pub fn id(v: &str) -> Value {
    json!({ "by": "id", "value": v })
}

/// A CSS locator.
pub fn css(v: &str) -> Value {
    json!({ "by": "css", "value": v })
}

/// A step on `base` + `page`.
pub fn step(base: &str, page: &str, action: Value, target: Option<Value>) -> Value {
    let mut s = json!({ "action": action, "url": format!("{base}{page}"), "title": "Flow Shop" });
    if let Some(t) = target {
        s["target"] = t;
    }
    s
}

/// A fill from parameter `param`.
pub fn fill(param: &str) -> Value {
    json!({ "kind": "fill", "value": { "param": param } })
}

/// The whole purchase as the person recorded it on `/flowshop/`: search,
/// open the product, choose a size, fill the address, reach and press the
/// order button. Address fields are parameters without defaults.
pub fn purchase(base: &str) -> Value {
    let click = json!({ "kind": "click" });
    let field =
        |label: &str, name: &str| target("textbox", label, json!([id(name), json!({"by": "name", "value": name})]));
    json!({
        "name": "purchase",
        "created": "2026-12-01T21:00:00Z",
        "params": [
            { "name": "fullname", "kind": "text" },
            { "name": "email", "kind": "email" },
            { "name": "phone", "kind": "phone" },
            { "name": "street", "kind": "address" },
            { "name": "postcode", "kind": "address" },
            { "name": "city", "kind": "address" },
        ],
        "steps": [
            step(base, "index.html", json!({ "kind": "navigate", "url": format!("{base}index.html") }), None),
            step(base, "index.html", json!({ "kind": "fill", "value": { "literal": "teapot" } }),
                Some(target("searchbox", "Search products", json!([id("q"), css("#search > input")])))),
            step(base, "index.html", click.clone(), Some(target("button", "Search", json!([id("go")])))),
            step(base, "results.html", click.clone(),
                Some(target("link", "Blue teapot", json!([id("hit-teapot"), {"by": "test_id", "value": {"attr": "data-testid", "value": "hit-teapot"}}])))),
            step(base, "product.html", json!({ "kind": "select", "value": { "literal": "Medium" } }),
                Some(target("combobox", "Size", json!([id("size")])))),
            step(base, "product.html", click.clone(), Some(target("link", "Continue to delivery", json!([id("continue")])))),
            step(base, "address.html", fill("fullname"), Some(field("Full name", "fullname"))),
            step(base, "address.html", fill("email"), Some(field("E-mail", "email"))),
            step(base, "address.html", fill("phone"), Some(field("Phone", "phone"))),
            step(base, "address.html", fill("street"), Some(field("Street", "street"))),
            step(base, "address.html", fill("postcode"), Some(field("Postcode", "postcode"))),
            step(base, "address.html", fill("city"), Some(field("City", "city"))),
            step(base, "address.html", json!({ "kind": "check", "checked": true }), Some(target("radio", "Express", json!([id("express")])))),
            step(base, "address.html", json!({ "kind": "check", "checked": true }), Some(target("checkbox", "Gift wrap", json!([id("gift")])))),
            step(base, "address.html", click.clone(), Some(target("button", "Continue to review", json!([id("review")])))),
            step(base, "review.html", click, Some(target("button", "Place order", json!([id("place"), css("main > button")])))),
        ],
    })
}

/// Straight to the review page and its order button.
pub fn order_only(base: &str, name: &str) -> Value {
    json!({
        "name": name,
        "created": "2026-12-01T21:00:00Z",
        "steps": [
            step(base, "review.html", json!({ "kind": "navigate", "url": format!("{base}review.html") }), None),
            step(base, "review.html", json!({ "kind": "click" }),
                Some(target("button", "Place order", json!([id("place"), css("main > button")])))),
        ],
    })
}

/// `chaperone flow import` of `flow` under `name`.
pub fn import(s: &crate::Stack, flow: &Value, name: &str) {
    import_into(&s.daemon, flow, name);
}

/// `chaperone flow import` of `flow` under `name` into `daemon`'s home.
pub fn import_into(daemon: &crate::Daemon, flow: &Value, name: &str) {
    let dir = crate::temp_dir("flow-file");
    let file = dir.path().join("flow.json");
    std::fs::write(&file, serde_json::to_string_pretty(flow).unwrap()).unwrap();
    let out = daemon.cli(&["flow", "import", file.to_str().unwrap(), "--name", name], "").expect("run the CLI");
    assert_eq!(out.code, 0, "import {name}: {}{}", out.stdout, out.stderr);
}

/// Parameters other than the recording's.
pub fn new_params() -> Value {
    json!({
        "fullname": "Ada Replay",
        "email": "ada@replay.example",
        "phone": "+43 1 234 5678",
        "street": "Neue Gasse 5",
        "postcode": "8010",
        "city": "Graz",
    })
}
