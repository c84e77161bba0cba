//! What an agent may choose, and what only a screen reader shows (issue
//! 13): a drop-down `<select>` lists its options on an `options:` line with
//! the current one marked, cut at `shared::limits::MAX_OPTIONS_SHOWN` with
//! `+N more`, complete in a snapshot scoped to the select; optgroups,
//! disabled and hidden options; a datalist's `suggestions:`;
//! `browser_select_option` with an option the list does not have says which
//! it has; controls clipped to nothing but exposed to assistive technology
//! (a skip link, screen-reader-only buttons) appear marked
//! `visually-hidden`, and lose the mark once the page shows them (the skip
//! link on focus, reached with a real Tab key press); hidden decoys never
//! appear; a 5,000-option select costs a bounded line and little time.

use std::time::{Duration, Instant};

use serde_json::json;
use shared::limits::MAX_OPTIONS_SHOWN;
use tests::{CdpSession, Stack, elements, line_after, parse_choices, parse_line, ref_of};

use super::{code, new_tab, page_at, snapshot, snapshot_matches};

/// The labels of a select's options as the page has them (`option.label`,
/// whitespace collapsed), hidden ones left out.
async fn page_labels(page: &CdpSession, id: &str) -> Vec<String> {
    let v = page
        .evaluate(&format!(
            "Array.from(document.getElementById('{id}').options).filter(o => !o.hidden).map(o => o.label.replace(/\\s+/g, ' ').trim())"
        ))
        .await
        .expect("read the options");
    v.as_array().expect("an array").iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect()
}

/// The line of the element with this role and name.
fn line_of<'a>(text: &'a str, role: &str, name: &str) -> &'a str {
    text.lines()
        .find(|l| parse_line(l).is_some_and(|p| p.role == role && p.name.as_deref() == Some(name)))
        .unwrap_or_else(|| panic!("no {role} {name:?} in:\n{text}"))
}

async fn press_tab(page: &CdpSession) {
    for kind in ["keyDown", "keyUp"] {
        page.call(
            "Input.dispatchKeyEvent",
            json!({ "type": kind, "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9, "nativeVirtualKeyCode": 9 }),
        )
        .await
        .expect("Tab");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_suggestions_and_screen_reader_only_controls() {
    let mut s = Stack::start_headless(None).await.expect("start the stack");
    let url = s.url("choices/checkout.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    // The page's own expectations: every options line, the marks, no decoy.
    let text = snapshot_matches(&mut s.mcp, &url, "choices/checkout.html").await;

    // 250 countries: the first ones up to the cap, the current one marked
    // although it lies past the cap, then how many more and how to see them.
    let country = ref_of(&text, "combobox", "Country").expect("the country select has a ref");
    let line = line_after(&text, "combobox", "Country").expect("an options line");
    let capped = parse_choices(line).unwrap_or_else(|| panic!("not an options line: {line}"));
    let labels = page_labels(&page, "ch-country").await;
    assert_eq!(labels.len(), 250);
    assert_eq!(capped.choices.len(), MAX_OPTIONS_SHOWN, "{line}");
    assert_eq!(capped.more, 250 - MAX_OPTIONS_SHOWN, "{line}");
    let selected: Vec<&str> = capped.choices.iter().filter(|c| c.selected).map(|c| c.label.as_str()).collect();
    assert_eq!(selected, ["Sweden"], "{line}");
    assert!(line.contains(&format!("browser_snapshot scope={country}")), "{line}");
    let shown: Vec<&str> = capped.choices.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(shown[..MAX_OPTIONS_SHOWN - 1], labels[..MAX_OPTIONS_SHOWN - 1], "in the page's order");

    // Scoped to the select: every option, in order, the same one marked.
    let scoped = snapshot(&mut s.mcp, json!({ "scope": country })).await.snapshot();
    let all = parse_choices(line_after(&scoped, "combobox", "Country").expect("an options line")).unwrap();
    assert_eq!(all.more, 0, "{scoped}");
    let all_labels: Vec<String> = all.choices.iter().map(|c| c.label.clone()).collect();
    assert_eq!(all_labels, labels);
    assert_eq!(all.choices.iter().filter(|c| c.selected).count(), 1);

    // A missing option: the error says which the list has (bounded), and
    // nothing changes on the page.
    let r = s.mcp.call("browser_select_option", json!({ "ref": country, "values": ["Swedenland"] })).await.unwrap();
    assert_eq!(code(&r), "INVALID_REQUEST", "{}", r.raw);
    let msg = r.text();
    assert!(msg.contains("\"Swedenland\"") && msg.contains("\"Sweden\""), "the nearest option first: {msg}");
    assert!(msg.contains("\"Afghanistan\"") && msg.contains("more"), "{msg}");
    assert!(msg.chars().count() <= shared::limits::MAX_ERROR_MESSAGE_CHARS + 40, "{msg}");
    let value = page.evaluate("document.getElementById('ch-country').value").await.unwrap();
    assert_eq!(value, json!("se"));

    // A disabled option is listed but cannot be chosen; a hidden one is
    // neither listed nor offered in the error.
    let after = text.clone();
    let speed = ref_of(&after, "combobox", "Delivery").unwrap();
    let r =
        s.mcp.call("browser_select_option", json!({ "ref": speed, "values": ["Same day (sold out)"] })).await.unwrap();
    assert_eq!(code(&r), "INVALID_REQUEST", "{}", r.raw);
    assert!(!r.text().contains("HIDDEN"), "{}", r.text());

    // The skip link is shown marked until the page shows it: a Tab key
    // press focuses it and the page's `:focus` rule unclips it.
    let skip = line_of(&after, "link", "Skip to main content");
    assert!(skip.contains(" visually-hidden"), "{skip}");
    page.call("Page.bringToFront", json!({})).await.expect("bring to front");
    press_tab(&page).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    let focused = loop {
        let t = snapshot(&mut s.mcp, json!({})).await.snapshot();
        let l = line_of(&t, "link", "Skip to main content").to_string();
        if l.contains(" focused") {
            break l;
        }
        assert!(Instant::now() < deadline, "the Tab key did not focus the skip link: {l}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(!focused.contains("visually-hidden"), "{focused}");

    // 5,000 options: the line stays at the cap, the snapshot stays quick,
    // and a scoped one lists at most the options an agent can choose.
    let big = s.url("choices/big.bulk.html");
    s.mcp.ok("browser_navigate", json!({ "url": big })).await.expect_untrusted();
    let started = Instant::now();
    let text = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let took = started.elapsed();
    let line = line_after(&text, "combobox", "Part number").expect("an options line");
    let c = parse_choices(line).unwrap();
    assert_eq!((c.choices.len(), c.more), (MAX_OPTIONS_SHOWN, 5_000 - MAX_OPTIONS_SHOWN), "{line}");
    assert!(c.choices.iter().any(|c| c.selected && c.label == "Part 4321" && c.gap), "{line}");
    assert!(line.chars().count() < 1_000, "{line}");
    assert!(took < Duration::from_secs(3), "a snapshot of the 5,000-option page took {took:?}");
    let part = ref_of(&text, "combobox", "Part number").unwrap();

    // A real option is chosen (here, on a page without card fields: the
    // classifier lets it run) and the next snapshot marks it.
    s.mcp.ok("browser_select_option", json!({ "ref": part, "values": ["Part 0007"] })).await;
    let after = snapshot(&mut s.mcp, json!({})).await.snapshot();
    assert!(line_of(&after, "combobox", "Part number").ends_with(": \"Part 0007\""), "{after}");
    let c = parse_choices(line_after(&after, "combobox", "Part number").unwrap()).unwrap();
    let selected: Vec<&str> = c.choices.iter().filter(|c| c.selected).map(|c| c.label.as_str()).collect();
    assert_eq!(selected, ["Part 0007"]);
    assert!(!c.choices.iter().any(|c| c.gap), "the current one is among the first: no gap");
    let scoped = snapshot(&mut s.mcp, json!({ "scope": part, "max_chars": 1_000_000 })).await.snapshot();
    let c = parse_choices(line_after(&scoped, "combobox", "Part number").unwrap()).unwrap();
    assert_eq!(c.choices.len() + c.more, 5_000);
    assert_eq!(c.choices.len(), shared::risk::MAX_OPTIONS_SEEN, "as many as browser_select_option can choose from");
    eprintln!("choices: 5,000-option page snapshot in {took:?}");
}

/// A list running far below the fold: its items' content is never marked
/// `offscreen` (a word a row saved), in a full snapshot or an
/// interactive-only one, where the items have no lines of their own; a
/// control below the fold outside any list is. Both snapshots give the same
/// refs to the same controls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_content_below_the_fold_is_unmarked_in_both_kinds_of_snapshot() {
    let mut s = Stack::start_headless(None).await.expect("start the stack");
    let url = s.url("hidden/long-list.html");
    new_tab(&mut s.mcp, &url).await;
    let full = snapshot_matches(&mut s.mcp, &url, "hidden/long-list.html").await;
    let only = snapshot(&mut s.mcp, json!({ "interactive_only": true })).await.snapshot();
    // Each element's own part of its line (list items show as row lines).
    let part = |text: &str, name: &str| -> String {
        elements(text)
            .into_iter()
            .find(|(p, _)| p.role == "button" && p.name.as_deref() == Some(name))
            .map(|(_, part)| part)
            .unwrap_or_else(|| panic!("no button {name:?} in:\n{text}"))
    };
    for text in [&full, &only] {
        for n in [1, 30, 60] {
            let part = part(text, &format!("Remove {n}"));
            assert!(!part.contains("offscreen"), "{part}\n{text}");
        }
        let clear = part(text, "Clear all");
        assert!(clear.contains("offscreen"), "{clear}\n{text}");
    }
    let refs = |text: &str| -> Vec<String> {
        (1..=60).map(|n| ref_of(text, "button", &format!("Remove {n}")).expect("a ref")).collect()
    };
    assert_eq!(refs(&full), refs(&only));
}

/// Text in any script reaches the agent unchanged (the content script
/// encodes short non-ASCII text into its memory itself, longer text with
/// the browser's encoder): each paragraph of a page in a dozen scripts,
/// emoji sequences and combining marks included, shows exactly as the page
/// has it, lone surrogates as U+FFFD (as `TextEncoder` makes them), and a
/// text longer than what the content script encodes itself as well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_in_any_script_reaches_the_snapshot_unchanged() {
    let mut s = Stack::start_headless(None).await.expect("start the stack");
    let url = s.url("names/scripts.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    // (The expression's value is a number: a string with lone surrogates
    // cannot come back over CDP.)
    page.evaluate(
        "(document.getElementById('lone').textContent = 'Lone \\uD800 high, lone \\uDC00 low, end \\uD83D', 1)",
    )
    .await
    .expect("set the lone surrogates");
    let text = snapshot_matches(&mut s.mcp, &url, "names/scripts.html").await;
    // What the page holds, well-formed and with whitespace collapsed as a
    // snapshot shows text.
    let want = page
        .evaluate(
            "Array.from(document.querySelectorAll('p[data-t]')).map(p => p.textContent\
               .replace(/[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]/g, '\\uFFFD')\
               .replace(/\\s+/g, ' ').trim())",
        )
        .await
        .expect("read the paragraphs");
    let want: Vec<String> =
        want.as_array().expect("an array").iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(want.len(), 7, "{want:?}");
    assert!(want[5].contains("Lone \u{FFFD} high, lone \u{FFFD} low, end \u{FFFD}"), "{want:?}");
    assert!(want[6].encode_utf16().count() > 512, "the long text must be longer than the short-text limit");
    for w in &want {
        // Text lines are cut at `MAX_TEXT_CHARS` characters: compare what
        // fits.
        let head: String = w.chars().take(shared::limits::MAX_TEXT_CHARS - 20).collect();
        assert!(text.contains(&head), "{head:?} is not in the snapshot:\n{text}");
    }
}
