//! Every language a person reads (issue 29): "Delete account" and other
//! consequential buttons in Romanian, Hungarian, Finnish, Danish, Bulgarian,
//! Hindi, Hebrew, Greek and Lithuanian were rated low (or medium, "a script
//! the rules do not read") and so clicked without asking. Under a policy
//! with `high = "deny"` each is now refused, and the page sees nothing; a
//! harmless look-alike in the same language (sort, my orders, next page) is
//! clicked (the control: the refusals are the words, not the page). A
//! sign-in, CAPTCHA, code, block and consent page written only in another
//! language is named in the snapshot like its English twin; a foreign blog
//! post that quotes those words is not.

use serde_json::{Value, json};
use tests::{Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

/// (button name, element id, the rule the refusal must name).
const CONSEQUENTIAL: &[(&str, &str, &str)] = &[
    ("Șterge contul", "del-ro", "delete/remove"),
    ("Fiók törlése", "del-hu", "delete/remove"),
    ("Poista tili", "del-fi", "delete/remove"),
    ("Slet konto", "del-da", "delete/remove"),
    ("Изтрий профила", "del-bg", "delete/remove"),
    ("खाता हटाएं", "del-hi", "delete/remove"),
    ("מחק חשבון", "del-he", "delete/remove"),
    ("Διαγραφή λογαριασμού", "del-el", "delete/remove"),
    ("ΠΛΗΡΩΜΗ", "pay-el", "pay/buy/order"),
    ("Semnează contractul", "sign-ro", "consent/terms"),
    ("Pateikti užsakymą", "order-lt", "pay/buy/order"),
];

/// (button name, element id): harmless look-alikes on the same page.
const HARMLESS: &[(&str, &str)] = &[
    ("Sortează după dată", "sort-ro"),
    ("Rendeléseim", "orders-hu"),
    ("Tilaushistoria", "history-fi"),
    ("Mine ordrer", "orders-da"),
    ("Моите поръчки", "orders-bg"),
    ("अगला पृष्ठ", "next-hi"),
    ("מיין לפי", "sort-he"),
    ("Ταξινόμηση κατά", "sort-el"),
];

async fn ran(page: &tests::CdpSession) -> Value {
    page.evaluate("document.body.dataset.ran").await.expect("read the page")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consequential_buttons_in_every_language_are_refused_and_look_alikes_run() {
    let mut s = Stack::start_headless(Some("[risk]\nhigh = \"deny\"\n")).await.expect("start the stack");
    let url = s.url("/languages/index.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let ref_for =
        |name: &str| ref_of(&snap, "button", name).unwrap_or_else(|| panic!("no button {name:?} in:\n{snap}"));

    let mut failures = Vec::new();
    for (name, id, rule) in CONSEQUENTIAL {
        let r = s.mcp.call("browser_click", json!({ "ref": ref_for(name) })).await.expect("browser_click");
        let message = r.structured()["message"].as_str().unwrap_or("").to_string();
        if code(&r) != "PERMISSION_DENIED" || !message.contains(rule) || !message.contains("high") {
            failures.push(format!("{id} {name:?}: want PERMISSION_DENIED naming {rule:?}, got {}", r.raw));
        }
    }
    assert_eq!(ran(&page).await, json!(""), "a refused button ran");

    let mut want = String::new();
    for (name, id) in HARMLESS {
        let r = s.mcp.call("browser_click", json!({ "ref": ref_for(name) })).await.expect("browser_click");
        if r.is_error() {
            failures.push(format!("{id} {name:?}: the harmless look-alike was refused: {}", r.raw));
            continue;
        }
        let r = r.expect_untrusted();
        if r.data()["risk"] != json!("low") || r.data()["decided_by"] != json!("policy") {
            failures.push(format!("{id} {name:?}: want low, decided by the policy: {}", r.raw));
        }
        want.push_str(id);
        want.push(' ');
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    assert_eq!(ran(&page).await, json!(want), "the look-alikes ran, each once, and nothing else");
}

/// The kind on the snapshot's `Challenge:` line, if any.
fn challenge_of(snapshot: &str) -> Option<String> {
    snapshot
        .lines()
        .take_while(|l| !l.trim_start().starts_with("- "))
        .find_map(|l| l.strip_prefix("Challenge: ").map(|r| r.split_whitespace().next().unwrap_or("").to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn challenge_pages_in_other_languages_are_named_like_their_english_twins() {
    // Headless: nobody could solve a challenge, so the navigation's wait
    // is refused with the kind at once; the snapshot still names it.
    let mut s = Stack::start_headless(None).await.expect("start the stack");
    let start = s.url("/basic/index.html");
    new_tab(&mut s.mcp, &start).await;
    let mut failures = Vec::new();
    for (path, want) in [
        ("/challenges/login.html", Some("login")),
        ("/challenges/lang/login-ro.html", Some("login")),
        ("/challenges/lang/login-el.html", Some("login")),
        ("/challenges/lang/captcha-hu.html", Some("captcha")),
        ("/challenges/lang/captcha-hi.html", Some("captcha")),
        ("/challenges/lang/mfa-fi.html", Some("mfa")),
        ("/challenges/lang/blocked-he.html", Some("blocked")),
        ("/challenges/lang/consent-ja.html", Some("oauth_consent")),
        ("/challenges/lang/passkey-pl.html", Some("passkey")),
        ("/challenges/benign/article-ro.html", None),
        ("/challenges/benign/newsletter-el.html", None),
    ] {
        let url = s.url(path);
        let r = s.mcp.call("browser_navigate", json!({ "url": url })).await.expect("browser_navigate");
        let refused = r.error_code() == Some("SECURITY_CHALLENGE");
        let kind = r.structured()["challenge"]["kind"].as_str().map(str::to_string);
        match want {
            Some(w) if !refused || kind.as_deref() != Some(w) => {
                failures.push(format!("{path}: navigation should be SECURITY_CHALLENGE {w}, got {}", r.raw))
            }
            None if r.is_error() => failures.push(format!("{path}: a harmless page refused the navigation: {}", r.raw)),
            _ => {}
        }
        let snap = snapshot(&mut s.mcp, json!({})).await;
        assert_eq!(snap.data()["url"], json!(url), "snapshot of the wrong page: {}", snap.raw);
        let got = challenge_of(&snap.snapshot());
        if got.as_deref() != want {
            failures.push(format!("{path}: snapshot names {got:?}, want {want:?}"));
        } else {
            eprintln!("{path}: {got:?}");
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}
