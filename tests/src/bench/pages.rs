//! Generated benchmark pages, written into a temp directory laid out like
//! `fixtures/sites/` and served by [`crate::FixtureServer`]-style serving.
//!
//! - `bench/form.html`: a 28-control form (inputs, selects, checkboxes,
//!   radios, textareas, buttons, all labelled).
//! - `bench/rows-N.html`: a heading, a toolbar in an open shadow root
//!   (created by the same-origin `shadow.js`), a same-origin iframe with a
//!   small form (`frame-form.html`), then `N` rows in a list, each a link, a
//!   text and Edit/Delete buttons.
//!
//! Everything is deterministic so figures compare across runs.

use std::fmt::Write as _;
use std::path::Path;

/// Row counts of the generated list pages.
pub const ROW_SIZES: [usize; 3] = [200, 2_000, 10_000];

/// Number of form controls on `form.html` (checked by a unit test).
pub const FORM_CONTROLS: usize = 28;

/// The site directory inside the served root.
pub const SITE: &str = "bench";

/// URL path of the form page.
pub fn form_path() -> String {
    format!("/{SITE}/form.html")
}

/// URL path of the page with `rows` rows.
pub fn rows_path(rows: usize) -> String {
    format!("/{SITE}/rows-{rows}.html")
}

/// The accessible name of row `i`'s link (1-based), used to check that a
/// snapshot reached the last row.
pub fn row_link_name(i: usize) -> String {
    format!("Item {i}")
}

/// Rows on the plain-`<div>` page and cards on the grid page (issue 32).
pub const DIV_ROWS: usize = 2_000;
pub const CARDS: usize = 500;

/// URL path of the page of [`DIV_ROWS`] plain `<div>` rows.
pub fn divs_path() -> String {
    format!("/{SITE}/divs-{DIV_ROWS}.html")
}

/// URL path of the grid of [`CARDS`] product cards.
pub fn cards_path() -> String {
    format!("/{SITE}/cards-{CARDS}.html")
}

/// The heading of card `i` (1-based), to check a snapshot reached the last card.
pub fn card_name(i: usize) -> String {
    format!("Product {i}")
}

/// URL path of the simple click page.
pub fn click_path() -> String {
    format!("/{SITE}/click.html")
}

/// A simple page for the click round trip: one low-risk button that
/// toggles a details panel (a same-origin script; no form, no risky word).
pub const CLICK_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bench: click</title>\n\
<script src=\"click.js\" defer></script></head>\n<body><main><h1>Product</h1>\n\
<button type=\"button\" id=\"toggle\" aria-expanded=\"false\">Show details</button>\n\
<p id=\"details\" hidden>Made of wood.</p>\n<p id=\"count\">0</p></main></body></html>\n";

const CLICK_JS: &str = "document.getElementById('toggle').addEventListener('click', (e) => {\n\
  const d = document.getElementById('details');\n  d.hidden = !d.hidden;\n\
  e.target.setAttribute('aria-expanded', String(!d.hidden));\n\
  const c = document.getElementById('count');\n  c.textContent = String(Number(c.textContent) + 1);\n});\n";

/// The page of session `n` in the `sessions` suite (one file each, so a
/// result's URL says whose tab it came from): the click page's button and
/// a plain text field (low risk both).
pub fn sessions_path(n: usize) -> String {
    format!("/{SITE}/sessions-{n}.html")
}

/// Sessions the `sessions` suite has pages for.
pub const SESSION_PAGES: usize = 8;

const SESSIONS_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bench: sessions</title>\n\
<script src=\"click.js\" defer></script></head>\n<body><main><h1>Product</h1>\n\
<button type=\"button\" id=\"toggle\" aria-expanded=\"false\">Show details</button>\n\
<p id=\"details\" hidden>Made of wood.</p>\n<p id=\"count\">0</p>\n\
<label>Note <input type=\"text\" id=\"note\"></label></main></body></html>\n";

/// Writes every page under `root/bench/`.
pub fn write_all(root: &Path) -> std::io::Result<()> {
    let dir = root.join(SITE);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("form.html"), form_page())?;
    std::fs::write(dir.join("click.html"), CLICK_PAGE)?;
    for n in 0..SESSION_PAGES {
        std::fs::write(dir.join(format!("sessions-{n}.html")), SESSIONS_PAGE)?;
    }
    std::fs::write(dir.join("click.js"), CLICK_JS)?;
    std::fs::write(dir.join("shadow.js"), SHADOW_JS)?;
    std::fs::write(dir.join("frame-form.html"), FRAME_FORM)?;
    super::files::write_page(&dir)?;
    for rows in ROW_SIZES {
        std::fs::write(dir.join(format!("rows-{rows}.html")), rows_page(rows))?;
    }
    std::fs::write(dir.join(format!("divs-{DIV_ROWS}.html")), divs_page(DIV_ROWS))?;
    std::fs::write(dir.join(format!("cards-{CARDS}.html")), cards_page(CARDS))?;
    Ok(())
}

/// A 28-control form: 10 text-like inputs, 3 selects, 5 checkboxes, 3
/// radios, 2 textareas, 1 range, 1 file, 3 buttons.
pub fn form_page() -> String {
    let mut h = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bench: account form</title></head>\n\
         <body><main><h1>Account settings</h1>\n<form action=\"#\" onsubmit=\"return false\">\n",
    );
    let inputs = [
        ("first", "First name", "text", "given-name"),
        ("last", "Last name", "text", "family-name"),
        ("email", "Email address", "email", "email"),
        ("phone", "Phone", "tel", "tel"),
        ("site", "Website", "url", "url"),
        ("age", "Age", "number", "off"),
        ("birthday", "Birthday", "date", "bday"),
        ("city", "City", "text", "address-level2"),
        ("zip", "Postal code", "text", "postal-code"),
        ("q", "Search help", "search", "off"),
    ];
    h.push_str("<fieldset><legend>Profile</legend>\n");
    for (id, label, ty, ac) in inputs {
        let _ = writeln!(
            h,
            "<p><label for=\"{id}\">{label}</label> <input id=\"{id}\" name=\"{id}\" type=\"{ty}\" autocomplete=\"{ac}\"></p>"
        );
    }
    h.push_str("</fieldset>\n<fieldset><legend>Preferences</legend>\n");
    let selects = [
        ("country", "Country", ["Germany", "France", "Spain", "Italy"]),
        ("lang", "Language", ["English", "Deutsch", "Français", "Español"]),
        ("tz", "Time zone", ["UTC", "CET", "EET", "WET"]),
    ];
    for (id, label, options) in selects {
        let _ = write!(h, "<p><label for=\"{id}\">{label}</label> <select id=\"{id}\" name=\"{id}\">");
        for o in options {
            let _ = write!(h, "<option>{o}</option>");
        }
        h.push_str("</select></p>\n");
    }
    for (i, label) in
        ["Newsletter", "Product updates", "Security alerts", "Weekly digest", "Beta features"].iter().enumerate()
    {
        let checked = if i % 2 == 0 { " checked" } else { "" };
        let _ = writeln!(h, "<p><label><input type=\"checkbox\" name=\"c{i}\"{checked}> {label}</label></p>");
    }
    h.push_str("<fieldset><legend>Plan</legend>\n");
    for (i, label) in ["Free", "Pro", "Team"].iter().enumerate() {
        let checked = if i == 0 { " checked" } else { "" };
        let _ = writeln!(h, "<label><input type=\"radio\" name=\"plan\" value=\"{i}\"{checked}> {label}</label>");
    }
    h.push_str("</fieldset>\n");
    h.push_str("<p><label for=\"bio\">About you</label> <textarea id=\"bio\" name=\"bio\">Hello</textarea></p>\n");
    h.push_str("<p><label for=\"notes\">Notes</label> <textarea id=\"notes\" name=\"notes\"></textarea></p>\n");
    h.push_str("<p><label for=\"vol\">Volume</label> <input id=\"vol\" type=\"range\" min=\"0\" max=\"10\"></p>\n");
    h.push_str("<p><label for=\"avatar\">Avatar</label> <input id=\"avatar\" type=\"file\"></p>\n");
    h.push_str("</fieldset>\n<p><button type=\"submit\">Save</button> <button type=\"reset\">Reset</button> ");
    h.push_str("<button type=\"button\">Cancel</button></p>\n</form></main></body></html>\n");
    h
}

/// The list page with `rows` rows, a shadow-DOM toolbar and an iframe form.
pub fn rows_page(rows: usize) -> String {
    let mut h = String::with_capacity(rows * 200 + 2_000);
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bench: {rows} orders</title></head>\n\
         <body>\n<header><h1>Orders</h1><nav><a href=\"/{SITE}/form.html\">Account</a> <a href=\"#help\">Help</a></nav></header>\n\
         <section aria-label=\"Tools\"><div id=\"toolbar-host\"></div><script src=\"shadow.js\"></script></section>\n\
         <section aria-label=\"Newsletter\"><iframe src=\"frame-form.html\" title=\"Newsletter sign-up\" width=\"400\" height=\"160\"></iframe></section>\n\
         <main><h2>All orders</h2>\n<ul class=\"rows\">\n"
    );
    const CITIES: [&str; 5] = ["Berlin", "Lyon", "Madrid", "Porto", "Utrecht"];
    const STATES: [&str; 4] = ["shipped", "pending", "delivered", "returned"];
    for i in 1..=rows {
        let _ = writeln!(
            h,
            "<li><a href=\"/{SITE}/items/{i}\">{}</a> <span>Order {i} · {} to {} · {} items</span> \
             <button type=\"button\">Edit</button> <button type=\"button\">Delete</button></li>",
            row_link_name(i),
            STATES[i % STATES.len()],
            CITIES[i % CITIES.len()],
            i % 7 + 1
        );
    }
    h.push_str("</ul></main>\n<footer id=\"help\"><p>Need help? Write to us.</p></footer>\n</body></html>\n");
    h
}

/// The rows of [`rows_page`] as most of the web builds them: plain
/// `<div>`s, no list, no roles.
pub fn divs_page(rows: usize) -> String {
    let mut h = String::with_capacity(rows * 200 + 1_000);
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bench: {rows} orders in divs</title>\n\
         <style>.row{{display:flex;gap:8px}}</style></head>\n\
         <body>\n<div class=\"top\"><h1>Orders</h1><div class=\"links\"><a href=\"/{SITE}/form.html\">Account</a> <a href=\"#help\">Help</a></div></div>\n\
         <div class=\"content\"><h2>All orders</h2>\n<div class=\"rows\">\n"
    );
    const CITIES: [&str; 5] = ["Berlin", "Lyon", "Madrid", "Porto", "Utrecht"];
    const STATES: [&str; 4] = ["shipped", "pending", "delivered", "returned"];
    for i in 1..=rows {
        let _ = writeln!(
            h,
            "<div class=\"row\"><div class=\"cell\"><a href=\"/{SITE}/items/{i}\">{}</a></div>\
             <div class=\"cell\">Order {i} · {} to {} · {} items</div>\
             <div class=\"cell\"><button type=\"button\">Edit</button> <button type=\"button\">Delete</button></div></div>",
            row_link_name(i),
            STATES[i % STATES.len()],
            CITIES[i % CITIES.len()],
            i % 7 + 1
        );
    }
    h.push_str("</div></div>\n<div id=\"help\">Need help? Write to us.</div>\n</body></html>\n");
    h
}

/// A grid of `cards` product cards: image, heading, price, rating, a
/// quantity field and a button, in `<div>`s.
pub fn cards_page(cards: usize) -> String {
    let mut h = String::with_capacity(cards * 400 + 1_000);
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bench: {cards} products</title>\n\
         <style>.grid{{display:grid;grid-template-columns:repeat(4,1fr);gap:12px}}img{{width:120px;height:90px;display:block}}</style></head>\n\
         <body>\n<header><h1>Shop</h1></header>\n<main><h2>All products</h2>\n<div class=\"grid\">\n"
    );
    for i in 1..=cards {
        let _ = writeln!(
            h,
            "<div class=\"card\"><img alt=\"Photo of product {i}\" src=\"data:image/gif;base64,R0lGODlhAQABAAAAACw=\">\
             <h3>{}</h3><div class=\"price\">{}.{:02} €</div><div class=\"rating\">{} stars · {} reviews</div>\
             <div class=\"buy\"><button type=\"button\">Add to cart</button></div></div>",
            card_name(i),
            5 + i % 90,
            i % 100,
            1 + i % 5,
            i * 7 % 300
        );
    }
    h.push_str("</div></main>\n<footer><p>Free delivery from 50 €.</p></footer>\n</body></html>\n");
    h
}

/// Builds an open shadow root with a small toolbar (same-origin script, so
/// it also runs under a strict CSP).
const SHADOW_JS: &str = r##"(() => {
  const host = document.getElementById('toolbar-host');
  const root = host.attachShadow({ mode: 'open' });
  root.innerHTML = '<div role="toolbar" aria-label="Order tools">' +
    '<label>Filter <input type="search" name="filter"></label> ' +
    '<button type="button">Export</button> <button type="button" aria-pressed="false">Compact view</button> ' +
    '<a href="#archive">Archive</a></div>';
})();
"##;

/// The same-origin iframe's small form.
const FRAME_FORM: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Newsletter</title></head>\n\
<body><form action=\"#\" onsubmit=\"return false\"><h2>Newsletter</h2>\n\
<p><label for=\"nl-email\">Email</label> <input id=\"nl-email\" type=\"email\" autocomplete=\"email\"></p>\n\
<p><label><input type=\"checkbox\" name=\"weekly\"> Weekly</label></p>\n\
<p><button type=\"submit\">Subscribe</button></p></form></body></html>\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_has_28_controls() {
        let f = form_page();
        let controls = f.matches("<input").count()
            + f.matches("<select").count()
            + f.matches("<textarea").count()
            + f.matches("<button").count();
        assert_eq!(controls, FORM_CONTROLS);
    }

    #[test]
    fn rows_pages_have_their_rows() {
        let p = rows_page(200);
        assert_eq!(p.matches("<li>").count(), 200);
        assert!(p.contains(&format!(">{}</a>", row_link_name(200))));
        assert_eq!(p.matches(">Delete</button>").count(), 200);
    }
}
