//! The rules: what an action, its element and the page URL add up to
//! ([`classify`]), each rule a function over the element's facts and the
//! matcher's hits, in the fixed order the reasons are reported in.

use super::*;

pub(super) struct Hits(pub(super) Vec<(RiskLevel, String)>);

impl Hits {
    pub(super) fn add(&mut self, risk: RiskLevel, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.0.iter().any(|(_, r)| *r == reason) {
            self.0.push((risk, reason));
        }
    }

    pub(super) fn finish(mut self) -> Classification {
        // Stable: equal levels keep rule order.
        self.0.sort_by_key(|h| std::cmp::Reverse(h.0));
        Classification {
            risk: self.0.first().map(|h| h.0).unwrap_or(RiskLevel::Low),
            reasons: self.0.into_iter().map(|h| h.1).collect(),
        }
    }
}

pub(super) fn short(s: &str) -> String {
    let s = crate::text::strip_bidi(s);
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 60 { format!("{}…", s.chars().take(60).collect::<String>()) } else { s }
}

pub(super) fn role_is(el: &ElementFacts, roles: &[&str]) -> bool {
    roles.iter().any(|r| el.role.eq_ignore_ascii_case(r))
}

pub(super) fn is_text_entry(el: &ElementFacts) -> bool {
    el.editable
        || el.is_rich_text
        || role_is(el, TEXT_ROLES)
        || (el.role.is_empty()
            && !el.input_type.is_empty()
            && crate::input::IMPLICIT_SUBMISSION_TYPES.contains(&el.input_type.as_str()))
}

pub(super) fn is_checkbox(el: &ElementFacts) -> bool {
    role_is(el, CHECKBOX_ROLES) || el.input_type.eq_ignore_ascii_case("checkbox")
}

pub(super) fn in_search_ui(el: &ElementFacts) -> bool {
    let c = compiled();
    el.form_is_search
        || el.role.eq_ignore_ascii_case("searchbox")
        || el.context.iter().any(|l| any_in(&c.search_context, &normalize(l)).is_some())
}

/// Applies the keyword rules to one text (`what` = "name", "option"…).
pub(super) fn keyword_rules(what: &str, text: &str, el: Option<&ElementFacts>, hits: &mut Hits) -> bool {
    let ws = normalize(text);
    let c = compiled();
    let mut any = false;
    for hit in keyword_hits(&ws) {
        any = true;
        let base = format!("{what} matches \"{}\" ({})", hit.keyword, hit.rule.label);
        let look_alike =
            LOOK_ALIKES.iter().zip(c.look_alike_words.iter().zip(&c.look_alike_unless)).find(|(l, (lw, lu))| {
                l.rule == hit.rule.id
                    && (lw.is_empty() || lw.iter().any(|p| p.in_words(&ws)))
                    && !lu.iter().any(|p| p.in_words(&ws))
                    && (!l.needs_search_context || el.is_some_and(in_search_ui))
                    && (!l.needs_search_form || el.is_some_and(|e| e.form_is_search))
            });
        match look_alike {
            Some((l, _)) => hits.add(l.risk, format!("{base}, {}: {}", l.risk.as_str(), l.why)),
            None => hits.add(hit.rule.risk, base),
        }
    }
    any
}

/// Clicking, or Enter/Space on a control, or a submit that follows typing.
pub(super) fn activation_rules(el: &ElementFacts, hits: &mut Hits) {
    let c = compiled();
    target_rules(el, el.is_submit_button, hits);
    // A column or section title sorts or toggles, unless it is really a
    // button (it has a button type) or a link (it has a target): a role
    // the page sets must not turn "Delete account" into a title.
    if role_is(el, TITLE_ROLES) && el.input_type.is_empty() && el.target.is_empty() {
        if !keyword_hits(&normalize(&el.name)).is_empty() {
            hits.add(
                RiskLevel::Low,
                format!("\"{}\" is a {} title; clicking it sorts or toggles", short(&el.name), el.role),
            );
        }
        return;
    }
    if el.is_submit_button {
        if el.form_is_search {
            hits.add(RiskLevel::Low, "submits a search form");
        } else {
            hits.add(RiskLevel::High, "submits a form");
        }
    }
    let named = keyword_rules("name", &el.name, Some(el), hits);
    let shown = visible_text_rules(el, hits);
    paint::paint_rules(el, hits);
    let matched = named || shown;
    if is_checkbox(el) {
        let ws = normalize(&el.name);
        if el.consent_hint {
            hits.add(RiskLevel::High, "consent checkbox (marked by the page)");
        } else if let Some(t) = any_in(&c.terms, &ws) {
            hits.add(RiskLevel::High, format!("consent checkbox: name mentions \"{t}\""));
        }
    }
    form_field_rules(el, hits);
    // Context: a dialog or section about a high-risk act raises its buttons.
    let name_ws = normalize(&el.name);
    let dismiss = !name_ws.is_empty() && c.dismiss.contains(&name_ws);
    if dismiss || matched {
        return;
    }
    let confirms = name_ws.is_empty() || any_in(&c.affirmative, &name_ws).is_some_and(|_| name_ws.len() <= 4);
    for label in &el.context {
        if let Some(hit) = keyword_hits(&normalize(label)).into_iter().find(|h| h.rule.risk == RiskLevel::High) {
            let base = format!("context \"{}\" matches \"{}\" ({})", short(label), hit.keyword, hit.rule.label);
            if confirms {
                hits.add(RiskLevel::High, format!("{base}; \"{}\" confirms it", short(&el.name)));
            } else {
                hits.add(RiskLevel::Medium, base);
            }
            break;
        }
    }
    if el.name.trim().is_empty() && role_is(el, &["button", "link", "menuitem"]) && hits.0.is_empty() {
        hits.add(RiskLevel::Medium, format!("{} has no accessible name", el.role));
    }
    if unread_script(&el.name) {
        hits.add(RiskLevel::Medium, format!("\"{}\" is in a script the rules do not read", short(&el.name)));
    }
}

/// Input types that make a plain (non-submit) button.
pub(super) const BUTTON_TYPES: &[&str] = &["button", "image", "reset"];

/// A language the rules do not read must not lower protection: a button
/// (not a submit, which asks anyway) in a form that holds card, bank,
/// identity or account fields is high whatever it is called, since
/// scripts commonly submit such forms from a plain button. The form is
/// known from [`ElementFacts::form_fields`]: a `password` field, or a
/// field whose name reads as sensitive ([`crate::sensitive::classify_name`]:
/// card, CVV, IBAN, national id, one-time code…). Dismissing words
/// ("Cancel", "Back") are exempt.
pub(super) fn form_field_rules(el: &ElementFacts, hits: &mut Hits) {
    let button = role_is(el, &["button"]) || BUTTON_TYPES.iter().any(|t| el.input_type.eq_ignore_ascii_case(t));
    if !el.in_form || el.is_submit_button || el.form_is_search || !button {
        return;
    }
    let name_ws = normalize(&el.name);
    if !name_ws.is_empty() && compiled().dismiss.contains(&name_ws) {
        return;
    }
    let sensitive = el.form_fields.iter().find_map(|f| {
        let (kind, name) = f.split_once(':').unwrap_or(("", f));
        // Hidden fields and buttons hold nothing the person typed.
        if ["hidden", "button", "submit", "reset", "image"].contains(&kind) {
            return None;
        }
        if kind.eq_ignore_ascii_case("password") {
            return Some((name, SensitiveKind::Password));
        }
        crate::sensitive::classify_name(name).map(|k| (name, k))
    });
    if let Some((name, kind)) = sensitive {
        hits.add(
            RiskLevel::High,
            format!("a button in a form with {} fields (\"{}\"): it may submit them", kind_name(kind), short(name)),
        );
    }
}

/// Whether most letters of `name` are in scripts no language of the rules
/// is written in (Georgian, Armenian, Tamil, Ethiopic…): the keyword rules
/// cannot read it, so a click there is at least medium, and reported.
/// Latin, Cyrillic, Greek, Hebrew, Arabic, Devanagari, Bengali, Thai, Han,
/// Kana and Hangul are read.
pub fn unread_script(name: &str) -> bool {
    let (mut read, mut unread) = (0usize, 0usize);
    for c in name.chars().filter(|c| c.is_alphabetic()) {
        let cp = c as u32;
        let known = c.is_ascii()
            || matches!(cp, 0x00C0..=0x024F | 0x1E00..=0x1EFF | 0x0400..=0x052F | 0x0600..=0x06FF | 0x0750..=0x077F
                | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF | 0x0E01..=0x0E5B
                | 0x0370..=0x03FF | 0x0590..=0x05FF | 0x0900..=0x09FF)
            || (crate::sensitive::is_unspaced(c) && !matches!(cp, 0x0E81..=0x0EDF | 0x1000..=0x109F | 0x1780..=0x17FF));
        if known { read += 1 } else { unread += 1 }
    }
    unread > read
}

/// Enter in a field: submits or sends unless it is a search or Shift+Enter.
pub(super) fn enter_rules(el: Option<&ElementFacts>, mods: Modifiers, hits: &mut Hits) {
    let only_shift = mods.shift && !mods.ctrl && !mods.alt && !mods.meta;
    match el {
        Some(el) if is_text_entry(el) => {
            if only_shift {
                hits.add(RiskLevel::Low, "Shift+Enter inserts a line break");
            } else if el.form_is_search || el.role.eq_ignore_ascii_case("searchbox") {
                target_rules(el, el.in_form, hits);
                hits.add(RiskLevel::Low, "Enter in a search field");
            } else if el.in_form {
                target_rules(el, true, hits);
                hits.add(RiskLevel::High, "Enter in a form field may submit the form");
            } else {
                hits.add(RiskLevel::High, "Enter in a text box or rich-text editor may send");
            }
        }
        Some(el) => {
            activation_rules(el, hits);
            let plain_control = is_checkbox(el) || role_is(el, &["button", "link"]);
            if el.in_form && !el.is_submit_button && !plain_control && hits.0.is_empty() {
                hits.add(RiskLevel::High, "Enter in a form may submit it");
            }
        }
        None => hits.add(RiskLevel::Medium, "Enter with no focused element"),
    }
}

pub(super) fn key_rules(key: &str, mods: Modifiers, el: Option<&ElementFacts>, hits: &mut Hits) {
    let k = key.to_ascii_lowercase();
    let text = el.is_some_and(is_text_entry);
    match k.as_str() {
        "enter" | "return" => enter_rules(el, mods, hits),
        " " | "space" | "spacebar" if !text => match el {
            Some(el) => activation_rules(el, hits),
            None => hits.add(RiskLevel::Medium, "Space with no focused element"),
        },
        "delete" | "backspace" | "del" if !text => {
            hits.add(RiskLevel::High, "Delete outside a text field may delete the selected item");
        }
        k if NAV_KEYS.contains(&k) => {}
        _ if text && !mods.ctrl && !mods.meta && !mods.alt => {}
        _ if text => hits
            .add(RiskLevel::Medium, format!("{} in a text field may trigger an editor command", combo_name(key, mods))),
        _ => hits.add(
            RiskLevel::Medium,
            format!("{} outside a text field may trigger a site shortcut", combo_name(key, mods)),
        ),
    }
}

pub(super) fn combo_name(key: &str, m: Modifiers) -> String {
    let mut s = String::new();
    for (on, name) in [(m.ctrl, "Ctrl+"), (m.alt, "Alt+"), (m.shift, "Shift+"), (m.meta, "Meta+")] {
        if on {
            s.push_str(name);
        }
    }
    s.push_str(if key == " " { "Space" } else { key });
    format!("key \"{s}\"")
}

/// Splits a URL into its path words (per segment) and host labels other
/// than the last two (the registrable domain is not a page kind).
pub(super) fn url_words(url: &str) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let rest = &rest[..end];
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = authority.rsplit('@').next().unwrap_or("");
    let host = host.split(':').next().unwrap_or("");
    let labels: Vec<&str> = host.split('.').collect();
    let mut host_words: Vec<Vec<String>> = Vec::new();
    if labels.len() > 2 {
        host_words = labels[..labels.len() - 2].iter().map(|l| normalize(l)).collect();
    }
    // Known payment providers are matched on any label.
    host_words.extend(labels.iter().filter(|l| ["paypal", "klarna"].contains(l)).map(|l| normalize(l)));
    // Each segment as the server will read it (`%64elete` is `delete`),
    // decoded after the split so an encoded `/`, `?` or `#` hides nothing.
    let path_words = path.split('/').filter(|s| !s.is_empty()).map(|s| normalize(&percent_decoded(s))).collect();
    (path_words, host_words)
}

/// `%XX` escapes decoded (lossy UTF-8), again while that changes something
/// (at most three rounds: `%2564` is `%64` is `d`). For the URL rules only:
/// a server decodes before it acts, so the rules judge what it will read.
pub fn percent_decoded(s: &str) -> String {
    let mut cur = s.to_string();
    for _ in 0..3 {
        if !cur.contains('%') {
            break;
        }
        let b = cur.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
                (b'%', Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                }
                (c, _, _) => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        let next = String::from_utf8_lossy(&out).into_owned();
        if next == cur {
            break;
        }
        cur = next;
    }
    cur
}

pub(super) fn url_match(list: &PhraseSet, segments: &[Vec<String>]) -> Option<&'static str> {
    segments.iter().find_map(|ws| any_in(list, ws))
}

/// The first word of [`ACTION_PATHS`] in the URL's path segments or in the
/// value of an [`ACTION_QUERY_KEYS`] parameter: loading this URL may act.
/// One rule for navigation, link targets and form submissions.
pub(super) fn action_word(url: &str) -> Option<&'static str> {
    let c = compiled();
    let (path_segs, _) = url_words(url);
    if let Some(w) = path_segs.iter().find_map(|ws| any_in(&c.action_paths, ws)) {
        return Some(w);
    }
    let query = url.split_once('?').map(|(_, q)| q.split('#').next().unwrap_or("")).unwrap_or("");
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = percent_decoded(k).to_ascii_lowercase();
        if !ACTION_QUERY_KEYS.contains(&k.as_str()) {
            return None;
        }
        any_in(&c.action_paths, &normalize(&percent_decoded(&v.replace('+', " "))))
    })
}

/// The path of a URL for a reason (`/account/delete`), query kept short.
pub(super) fn shown_path(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    short(path.split('#').next().unwrap_or(path))
}

/// Where activating the element goes ([`ElementFacts::target`]): a link or
/// form target whose path (or action parameter) acts when loaded is high,
/// whatever the control is called; a form that posts to a payment or
/// account page is high even when it looks like a search.
pub(super) fn target_rules(el: &ElementFacts, submits: bool, hits: &mut Hits) {
    if el.target.is_empty() {
        return;
    }
    let form = !el.form_method.is_empty();
    if form && !submits {
        return;
    }
    let what = if form { "form sends to" } else { "link goes to" };
    if let Some(w) = action_word(&el.target) {
        hits.add(RiskLevel::High, format!("{what} \"{}\" (\"{w}\" acts when loaded)", shown_path(&el.target)));
    }
    // A GET form loads a page, like a link; only a form that posts can
    // change something on a payment or account page.
    if form && el.form_method != "get" {
        let (payment, account) = page_kinds(&el.target);
        if let Some(p) = payment {
            hits.add(RiskLevel::High, format!("{what} a payment page (\"{p}\" in \"{}\")", shown_path(&el.target)));
        }
        if let Some(p) = account {
            hits.add(
                RiskLevel::High,
                format!("{what} an account/security page (\"{p}\" in \"{}\")", shown_path(&el.target)),
            );
        }
    }
}

/// The [`PAYMENT_PATHS`] and [`ACCOUNT_PATHS`] word found in a URL's path
/// segments or host labels, if any: the page kinds on which acting asks.
pub(super) fn page_kinds(url: &str) -> (Option<&'static str>, Option<&'static str>) {
    let c = compiled();
    let (path_segs, host_segs) = url_words(url);
    let segs: Vec<Vec<String>> = path_segs.into_iter().chain(host_segs).collect();
    (url_match(&c.payment_paths, &segs), url_match(&c.account_paths, &segs))
}

/// Whether the element's visible text has words its accessible name does
/// not: then it is classified too, and the approval window shows it.
pub fn shows_more_than_name(el: &ElementFacts) -> bool {
    let shown = normalize(&el.visible_text);
    !shown.is_empty() && !words_within(&shown, &normalize(&el.name))
}

/// Whether every word of `a` is among the words of `b`.
pub(super) fn words_within(a: &[String], b: &[String]) -> bool {
    a.iter().all(|w| b.contains(w))
}

/// What the person sees ([`ElementFacts::visible_text`]) is classified like
/// the name when it says something the name does not, and the higher level
/// wins. When the two disagree (neither's words contain the other's) and
/// either reads as consequential (any keyword rule), the disagreement is
/// itself a reason to ask: the page tells the agent one thing and shows the
/// person another. True when the visible text matched a keyword.
pub(super) fn visible_text_rules(el: &ElementFacts, hits: &mut Hits) -> bool {
    if !shows_more_than_name(el) {
        return false;
    }
    let (shown, name) = (normalize(&el.visible_text), normalize(&el.name));
    let what = format!("visible text \"{}\"", short(&el.visible_text));
    let matched = keyword_rules(&what, &el.visible_text, Some(el), hits);
    let name_matches = !keyword_hits(&name).is_empty();
    if (matched || name_matches) && !words_within(&name, &shown) {
        hits.add(
            RiskLevel::High,
            format!(
                "{what} differs from its accessible name \"{}\": the page shows one thing and names another",
                short(&el.name)
            ),
        );
    }
    matched
}

/// Classifies one action. `element` is the resolved target (`None` for
/// page-level actions), `url` the page URL (for `Navigate`, the target),
/// `sensitive` the target field's [`crate::sensitive::classify_field`].
pub fn classify(
    action: &ActionKind,
    element: Option<&ElementFacts>,
    url: &str,
    sensitive: Option<SensitiveKind>,
) -> Classification {
    let mut hits = Hits(Vec::new());
    let password_input = element.is_some_and(|e| e.input_type.eq_ignore_ascii_case("password"));
    let sensitive = sensitive.or(password_input.then_some(SensitiveKind::Password));

    let state_changing = match action {
        // Clicking a text field only focuses it; typing there is classified.
        ActionKind::Click => match element {
            Some(el) if is_text_entry(el) && !el.is_submit_button => false,
            Some(el) => {
                activation_rules(el, &mut hits);
                true
            }
            None => true,
        },
        ActionKind::Type { submit } | ActionKind::FillForm { submit } => {
            if let Some(kind) = sensitive {
                hits.add(RiskLevel::High, format!("types into a sensitive field ({})", kind_name(kind)));
            }
            if *submit {
                enter_rules(element, Modifiers::default(), &mut hits);
            }
            true
        }
        ActionKind::SelectOption { options } => {
            for o in options {
                match element.and_then(|e| chosen_option(&e.options, o).map(|i| &e.options[i])) {
                    Some(chosen) => {
                        keyword_rules("option", &chosen.label, element, &mut hits);
                        if !words_within(&normalize(&chosen.value), &normalize(&chosen.label)) {
                            keyword_rules("option value", &chosen.value, element, &mut hits);
                        }
                    }
                    None => {
                        keyword_rules("option", o, element, &mut hits);
                    }
                }
            }
            true
        }
        ActionKind::PressKey { key, modifiers } => {
            key_rules(key, *modifiers, element, &mut hits);
            if let Some(kind) = sensitive
                && !NAV_KEYS.contains(&key.to_ascii_lowercase().as_str())
            {
                hits.add(RiskLevel::High, format!("key press in a sensitive field ({})", kind_name(kind)));
            }
            let k = key.to_ascii_lowercase();
            !NAV_KEYS.contains(&k.as_str()) || modifiers.any()
        }
        ActionKind::Upload => {
            hits.add(RiskLevel::Medium, "uploads a file");
            true
        }
        // Saving a file: the page the link was on does not make it riskier
        // (an invoice from a billing page is still an invoice).
        ActionKind::Download { risky } => {
            if *risky {
                hits.add(RiskLevel::High, "downloads an executable or an archive");
            } else {
                hits.add(RiskLevel::Medium, "downloads a file");
            }
            false
        }
        ActionKind::Navigate => {
            if let Some(w) = action_word(url) {
                hits.add(RiskLevel::High, format!("URL path \"{w}\" may act when loaded"));
            }
            false
        }
        ActionKind::CloseTab { opened_by_agent } => {
            if !opened_by_agent {
                hits.add(RiskLevel::High, "closes a tab the agent did not open");
            }
            false
        }
        ActionKind::Scroll
        | ActionKind::Hover
        | ActionKind::WaitFor
        | ActionKind::Screenshot
        | ActionKind::Snapshot => false,
    };

    if state_changing {
        let (payment, account) = page_kinds(url);
        if let Some(p) = payment {
            hits.add(RiskLevel::High, format!("payment page (\"{p}\" in URL)"));
        }
        if let Some(p) = account {
            hits.add(RiskLevel::High, format!("account/security page (\"{p}\" in URL)"));
        }
    }
    hits.finish()
}

pub(super) fn kind_name(k: SensitiveKind) -> &'static str {
    match k {
        SensitiveKind::Password => "password",
        SensitiveKind::OneTimeCode => "one-time code",
        SensitiveKind::Pin => "PIN",
        SensitiveKind::Token => "token",
        SensitiveKind::Card => "card",
        SensitiveKind::Bank => "bank",
        SensitiveKind::NationalId => "national id",
        SensitiveKind::Unknown => "of a kind this version does not know",
    }
}
