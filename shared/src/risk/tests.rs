use super::*;

const CONTROLS: &str = include_str!("../../../fixtures/risk/controls.tsv");
/// Languages the keyword rules cover (Chinese as `zh-Hans` and
/// `zh-Hant`, the script subtags of BCP 47).
const LANGS: [&str; 22] = [
    "en", "es", "de", "ja", "fr", "ru", "pt", "it", "nl", "pl", "tr", "fa", "zh-Hans", "zh-Hant", "vi", "id", "cs",
    "ko", "uk", "ar", "sv", "th",
];
/// Languages the rules deliberately do not cover: their rows show that
/// consequential controls there still ask.
const UNCOVERED: [&str; 3] = ["sw", "tl", "ka"];

struct Row<'a> {
    line: usize,
    lang: &'a str,
    action: ActionKind,
    element: Option<ElementFacts>,
    url: String,
    sensitive: Option<SensitiveKind>,
    risk: RiskLevel,
    reason: &'a str,
    name: &'a str,
    note: &'a str,
}

fn parse_row(line: usize, text: &str) -> Row<'_> {
    let cols: Vec<&str> = text.split('\t').collect();
    assert_eq!(cols.len(), 9, "line {line}: expected 9 columns, got {}: {text:?}", cols.len());
    let [lang, action, role, name, path, facts, risk, reason, note] = cols[..] else { unreachable!() };
    let name = if name == "-" { "" } else { name };
    let mut el = ElementFacts {
        role: if role == "-" { String::new() } else { role.to_string() },
        name: name.to_string(),
        ..Default::default()
    };
    let (mut key, mut options, mut opened, mut sensitive, mut submit) = (String::new(), Vec::new(), false, None, false);
    if facts != "-" {
        for f in facts.split(',') {
            let (k, v) = f.split_once('=').unwrap_or((f, ""));
            match k {
                "submit" => {
                    submit = true;
                    el.is_submit_button = true;
                }
                "form" => el.in_form = true,
                "search" => el.form_is_search = true,
                "rich" => el.is_rich_text = true,
                "editable" => el.editable = true,
                "consent" => el.consent_hint = true,
                "opened" => opened = true,
                "type" => el.input_type = v.to_string(),
                "key" => key = v.to_string(),
                "ctx" => el.context = v.split('|').map(String::from).collect(),
                "shown" => el.visible_text = v.to_string(),
                "target" => el.target = v.to_string(),
                "method" => el.form_method = v.to_string(),
                "fields" => el.form_fields = v.split('|').map(String::from).collect(),
                "choices" => {
                    el.options = v
                        .split('|')
                        .map(|c| {
                            let (value, label) = c.split_once('=').unwrap_or((c, c));
                            OptionFacts { value: value.into(), label: label.into(), disabled: false }
                        })
                        .collect()
                }
                "opt" => options = v.split('|').map(String::from).collect(),
                "sensitive" => {
                    sensitive = Some(match v {
                        "password" => SensitiveKind::Password,
                        "card" => SensitiveKind::Card,
                        "bank" => SensitiveKind::Bank,
                        "token" => SensitiveKind::Token,
                        "otp" => SensitiveKind::OneTimeCode,
                        "pin" => SensitiveKind::Pin,
                        "id" => SensitiveKind::NationalId,
                        other => panic!("line {line}: unknown sensitive kind {other:?}"),
                    })
                }
                other => panic!("line {line}: unknown fact {other:?}"),
            }
        }
    }
    // For type/fill_form rows `submit` means "submit afterwards", and the
    // element is the field, not a submit button.
    let action = match action {
        "click" => ActionKind::Click,
        "type" | "fill_form" => {
            el.is_submit_button = false;
            if !el.role.is_empty() {
                el.editable = true;
            }
            if action == "type" { ActionKind::Type { submit } } else { ActionKind::FillForm { submit } }
        }
        "select_option" => ActionKind::SelectOption { options },
        "press_key" => ActionKind::press_key(&key),
        "scroll" => ActionKind::Scroll,
        "hover" => ActionKind::Hover,
        "wait_for" => ActionKind::WaitFor,
        "screenshot" => ActionKind::Screenshot,
        "snapshot" => ActionKind::Snapshot,
        "navigate" => ActionKind::Navigate,
        "upload" => ActionKind::Upload,
        "close_tab" => ActionKind::CloseTab { opened_by_agent: opened },
        other => panic!("line {line}: unknown action {other:?}"),
    };
    let risk = match risk {
        "low" => RiskLevel::Low,
        "medium" => RiskLevel::Medium,
        "high" => RiskLevel::High,
        other => panic!("line {line}: unknown risk {other:?}"),
    };
    let element = (role != "-" || !name.is_empty()).then_some(el);
    Row {
        line,
        lang,
        action,
        element,
        url: format!("https://www.example.test{path}"),
        sensitive,
        risk,
        reason,
        name,
        note,
    }
}

fn rows() -> Vec<Row<'static>> {
    let mut lines = CONTROLS.lines().enumerate().filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty());
    let (_, header) = lines.next().expect("header");
    assert!(header.starts_with("lang\taction\t"), "header: {header}");
    lines.map(|(i, l)| parse_row(i + 1, l)).collect()
}

#[test]
fn labelled_controls_classify_as_expected() {
    let rows = rows();
    let mut failures = Vec::new();
    for row in &rows {
        let got = classify(&row.action, row.element.as_ref(), &row.url, row.sensitive);
        let reason_ok =
            if row.reason == "-" { got.reasons.is_empty() } else { got.reasons.iter().any(|r| r.contains(row.reason)) };
        if got.risk != row.risk || !reason_ok {
            failures.push(format!(
                "line {} [{}] {:?} {:?} at {}: expected {} with reason {:?}, got {} {:?}",
                row.line,
                row.lang,
                row.action,
                row.name,
                row.url,
                row.risk.as_str(),
                row.reason,
                got.risk.as_str(),
                got.reasons
            ));
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    assert!(failures.is_empty(), "{} of {} labelled controls mismatched (listed above)", failures.len(), rows.len());
}

#[test]
fn the_table_is_big_enough_and_covers_all_languages() {
    let rows = rows();
    assert!(rows.len() >= 150, "only {} rows", rows.len());
    for lang in LANGS {
        let n = rows.iter().filter(|r| r.lang == lang).count();
        assert!(n >= 20, "{lang}: only {n} rows");
    }
    for lang in UNCOVERED {
        assert!(rows.iter().any(|r| r.lang == lang), "no row in the uncovered language {lang}");
    }
    for r in &rows {
        assert!(
            LANGS.contains(&r.lang) || UNCOVERED.contains(&r.lang),
            "line {}: unknown language {:?}",
            r.line,
            r.lang
        );
    }
    for level in [RiskLevel::Low, RiskLevel::Medium, RiskLevel::High] {
        assert!(rows.iter().any(|r| r.risk == level), "no {} row", level.as_str());
    }
}

/// Every text of a row the keyword rules read: name, visible text,
/// context labels, option labels and values.
fn row_texts<'r>(row: &'r Row<'_>) -> Vec<&'r str> {
    let mut out = vec![row.name];
    if let Some(el) = &row.element {
        out.push(&el.visible_text);
        out.extend(el.context.iter().map(String::as_str));
        out.extend(el.options.iter().flat_map(|o| [o.label.as_str(), o.value.as_str()]));
    }
    if let ActionKind::SelectOption { options } = &row.action {
        out.extend(options.iter().map(String::as_str));
    }
    out
}

/// A row is a harmless look-alike when its note starts with
/// "look-alike:" and it is expected below high, or with
/// "look-alike, asks:" (harmless, but the rules knowingly still ask,
/// the reason written in the note).
fn is_harmless_look_alike(row: &Row<'_>) -> bool {
    (row.note.starts_with("look-alike:") && row.risk < RiskLevel::High) || row.note.starts_with("look-alike, asks:")
}

/// Keywords of the first seven languages (the rule constants) that have
/// no row of their own: they predate the rule that every keyword brings
/// a row. This number may only fall.
const BASE_KEYWORDS_WITHOUT_ROWS: usize = 426;

#[test]
fn every_keyword_has_a_row() {
    let rows = rows();
    let texts = |lang: Option<&str>| -> Vec<Vec<String>> {
        rows.iter().filter(|r| lang.is_none_or(|l| r.lang == l)).flat_map(|r| row_texts(r)).map(normalize).collect()
    };
    let has_row = |texts: &[Vec<String>], k: &'static str| {
        let p = compile(k);
        texts.iter().any(|ws| p.in_words(ws))
    };
    // Every keyword of a language table: a row in that language.
    let mut missing = Vec::new();
    let mut total = 0;
    for l in LANGUAGES {
        let texts = texts(Some(l.code));
        let lists: [(&str, &[&'static str]); 11] = [
            ("destructive", l.destructive),
            ("payment", l.payment),
            ("send", l.send),
            ("consent", l.consent),
            ("authorize", l.authorize),
            ("security", l.security),
            ("security verb", l.security_verbs),
            ("security object", l.security_objects),
            ("affirmative", l.affirmative),
            ("terms", l.terms),
            ("search context", l.search_context),
        ];
        for (list, keywords) in lists {
            for k in keywords {
                total += 1;
                if !has_row(&texts, k) {
                    missing.push(format!("{} {list}: {k:?}", l.code));
                }
            }
        }
        for d in l.dismiss {
            total += 1;
            if !texts.iter().any(|ws| *ws == normalize(d)) {
                missing.push(format!("{} dismiss: {d:?}", l.code));
            }
        }
    }
    // The first seven languages: counted, and the count may only fall.
    let all = texts(None);
    let mut base: Vec<&[&'static str]> = KEYWORD_RULES.iter().map(|r| r.keywords).collect();
    base.extend([SECURITY_VERBS, SECURITY_OBJECTS, AFFIRMATIVE, TERMS_WORDS, SEARCH_CONTEXT]);
    let base_total: usize = base.iter().map(|l| l.len()).sum();
    let base_missing = base.iter().flat_map(|l| l.iter()).filter(|k| !has_row(&all, k)).count();
    println!(
        "keywords of the added languages: {total}, without a row in their language: {}; \
             first seven languages: {base_total}, without a row: {base_missing}",
        missing.len()
    );
    assert!(missing.is_empty(), "keywords without a row in their language: {missing:#?}");
    assert!(
        base_missing <= BASE_KEYWORDS_WITHOUT_ROWS,
        "{base_missing} keywords of the first seven languages have no row (was {BASE_KEYWORDS_WITHOUT_ROWS}): \
             add rows, do not remove them"
    );
}

/// The figures the issue asks for, printed for `--nocapture`.
#[test]
fn figures_high_rows_are_high_and_look_alikes_rarely_ask() {
    let rows = rows();
    let got: Vec<RiskLevel> =
        rows.iter().map(|r| classify(&r.action, r.element.as_ref(), &r.url, r.sensitive).risk).collect();
    let langs: Vec<&str> = LANGS.iter().copied().filter(|l| rows.iter().any(|r| r.lang == *l)).collect();
    let high: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].risk == RiskLevel::High).collect();
    let high_ok = high.iter().filter(|&&i| got[i] == RiskLevel::High).count();
    let harmless: Vec<usize> = (0..rows.len()).filter(|&i| is_harmless_look_alike(&rows[i])).collect();
    let asked = harmless.iter().filter(|&&i| got[i] == RiskLevel::High).count();
    let harmless_langs = {
        let mut l: Vec<&str> = harmless.iter().map(|&i| rows[i].lang).collect();
        l.sort_unstable();
        l.dedup();
        l.len()
    };
    let uncovered: Vec<usize> = (0..rows.len()).filter(|&i| UNCOVERED.contains(&rows[i].lang)).collect();
    let uncovered_high = uncovered.iter().filter(|&&i| rows[i].risk == RiskLevel::High).count();
    let uncovered_asked =
        uncovered.iter().filter(|&&i| rows[i].risk == RiskLevel::High && got[i] == RiskLevel::High).count();
    println!("risk table: {} rows, {} covered languages ({})", rows.len(), langs.len(), langs.join(" "));
    println!("high-risk rows classified high: {high_ok}/{} ({:.1}%)", high.len(), pct(high_ok, high.len()));
    println!(
        "harmless look-alike rows asked (high): {asked}/{} ({:.1}%) in {harmless_langs} languages",
        harmless.len(),
        pct(asked, harmless.len())
    );
    println!(
        "uncovered languages ({}): consequential rows asked {uncovered_asked}/{uncovered_high}",
        UNCOVERED.join(" ")
    );
    assert!(langs.len() >= 20, "only {} languages", langs.len());
    assert_eq!(high_ok, high.len(), "every high-risk row must be high");
    assert!(harmless.len() >= 40, "only {} harmless look-alike rows", harmless.len());
    assert!(asked * 20 <= harmless.len(), "harmless look-alikes asked {asked}/{} (> 5%)", harmless.len());
    assert!(uncovered_high >= 6 && uncovered_asked == uncovered_high);
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 }
}

#[test]
fn every_keyword_compiles_to_words_and_is_listed_once() {
    // Each merged list: the base constant and every language's part.
    let merged = |base: &'static [&'static str], part: fn(&Language) -> &'static [&'static str]| {
        base.iter().copied().chain(LANGUAGES.iter().flat_map(|l| part(l).iter().copied())).collect::<Vec<_>>()
    };
    let mut all: Vec<Vec<&'static str>> = KEYWORD_RULES
        .iter()
        .flat_map(|r| {
            let keywords =
                r.keywords.iter().copied().chain(LANGUAGES.iter().flat_map(|l| l.keywords(r.id).iter().copied()));
            let nots = r.not_phrases.iter().copied().chain(
                LANGUAGES.iter().flat_map(|l| l.not_phrases.iter().filter(|(id, _)| *id == r.id).map(|(_, p)| *p)),
            );
            [keywords.collect(), nots.collect()]
        })
        .collect();
    all.extend([
        merged(SECURITY_VERBS, |l| l.security_verbs),
        merged(SECURITY_OBJECTS, |l| l.security_objects),
        merged(AFFIRMATIVE, |l| l.affirmative),
        merged(DISMISS, |l| l.dismiss),
        merged(TERMS_WORDS, |l| l.terms),
        merged(SEARCH_CONTEXT, |l| l.search_context),
        merged(PAYMENT_PATHS, |l| l.payment_paths),
        merged(ACCOUNT_PATHS, |l| l.account_paths),
        merged(ACTION_PATHS, |l| l.action_paths),
    ]);
    all.extend(LOOK_ALIKES.iter().flat_map(|l| [l.with_words.to_vec(), l.unless_words.to_vec()]));
    let mut dups = Vec::new();
    for list in all {
        let mut seen = Vec::new();
        for k in list {
            let p = compile(k);
            assert!(!p.pats.is_empty() && p.pats.iter().all(|w| !w.word.is_empty()), "{k:?}");
            assert!(p.pats.iter().all(|w| w.word.len() >= 2 || p.pats.len() > 1), "one-letter keyword {k:?}");
            if seen.contains(&p.pats) {
                dups.push(k);
            }
            seen.push(p.pats);
        }
    }
    assert!(dups.is_empty(), "listed twice in one list (after normalising): {dups:?}");
    for l in LOOK_ALIKES {
        assert!(KEYWORD_RULES.iter().any(|r| r.id == l.rule), "look-alike for unknown rule {}", l.rule);
        assert!(l.risk < RiskLevel::High);
    }
    for l in LANGUAGES {
        for (id, p) in l.not_phrases {
            assert!(KEYWORD_RULES.iter().any(|r| r.id == *id), "{}: not-phrase {p:?} for unknown rule {id}", l.code);
        }
    }
}

fn click(name: &str) -> Classification {
    let el = ElementFacts { role: "button".into(), name: name.into(), ..Default::default() };
    classify(&ActionKind::Click, Some(&el), "https://a.example/", None)
}

#[test]
fn normalising_folds_case_space_diacritics_and_sharp_s() {
    assert_eq!(normalize("  KONTO   Schließen "), ["konto", "schliessen"]);
    assert_eq!(normalize("Désabonner"), ["desabonner"]);
    assert_eq!(normalize("J'accepte"), ["j", "accepte"]);
    assert_eq!(click("KONTO   SCHLIESSEN").risk, RiskLevel::High);
    assert_eq!(click("Konto schließen").risk, RiskLevel::High);
    assert_eq!(click("SUPPRIMER").risk, RiskLevel::High);
    assert_eq!(click("deleteAccount").risk, RiskLevel::High);
    assert_eq!(click("De\u{200B}lete").risk, RiskLevel::High);
    assert_eq!(click("Sup\u{00AD}primer").risk, RiskLevel::High);
}

#[test]
fn keywords_match_whole_words_only() {
    for harmless in
        ["Deleted items", "Removal history", "Sender", "Repayment plan info", "Bookmarks", "Posts", "Shares"]
    {
        let got = click(harmless);
        assert_eq!(got.risk, RiskLevel::Low, "{harmless}: {:?}", got.reasons);
    }
}

#[test]
fn prefixes_catch_inflections() {
    for (name, rule) in [
        ("Löschen", "delete/remove"),
        ("Löscht alles", "delete/remove"),
        ("Supprimez", "delete/remove"),
        ("Kündigung", "delete/remove"),
        ("Verwijderen", "delete/remove"),
        ("Purchasing", "pay/buy/order"),
        ("Betaling afronden", "pay/buy/order"),
        ("Prenotazione", "pay/buy/order"),
        ("Envoyez", "send/publish"),
        ("Einladung senden", "send/publish"),
        ("Authorise", "sign-in/authorize"),
    ] {
        let got = click(name);
        assert_eq!(got.risk, RiskLevel::High, "{name}");
        assert!(got.reasons.iter().any(|r| r.contains(rule)), "{name}: {:?}", got.reasons);
    }
}

#[test]
fn highest_wins_and_reasons_accumulate_in_a_fixed_order() {
    let el = ElementFacts {
        role: "button".into(),
        name: "Delete and pay".into(),
        is_submit_button: true,
        in_form: true,
        ..Default::default()
    };
    let got = classify(&ActionKind::Click, Some(&el), "https://a.example/checkout", None);
    assert_eq!(got.risk, RiskLevel::High);
    assert_eq!(
        got.reasons,
        [
            "submits a form",
            "name matches \"delete\" (delete/remove)",
            "name matches \"pay\" (pay/buy/order)",
            "payment page (\"checkout\" in URL)",
        ]
    );
    assert_eq!(got, classify(&ActionKind::Click, Some(&el), "https://a.example/checkout", None));
    // A medium upload on a payment page: high first, medium kept.
    let got = classify(&ActionKind::Upload, None, "https://a.example/billing/docs", None);
    assert_eq!(got.risk, RiskLevel::High);
    assert_eq!(got.reasons, ["payment page (\"billing\" in URL)", "uploads a file"]);
}

#[test]
fn host_labels_count_as_page_kinds() {
    let el = ElementFacts { role: "button".into(), name: "Continue".into(), ..Default::default() };
    for url in ["https://checkout.shop.example/", "https://accounts.example.com/x", "https://www.paypal.com/"] {
        assert_eq!(classify(&ActionKind::Click, Some(&el), url, None).risk, RiskLevel::High, "{url}");
    }
    assert_eq!(classify(&ActionKind::Click, Some(&el), "https://account.example/", None).risk, RiskLevel::Low);
    assert_eq!(classify(&ActionKind::Click, Some(&el), "https://a.example/paypalish", None).risk, RiskLevel::Low);
}

#[test]
fn merge_keeps_the_higher_level_and_all_reasons() {
    let a = Classification { risk: RiskLevel::Low, reasons: vec!["x".into()] };
    let b = Classification { risk: RiskLevel::High, reasons: vec!["y".into(), "x".into()] };
    assert_eq!(a.merge(b), Classification { risk: RiskLevel::High, reasons: vec!["x".into(), "y".into()] });
}

#[test]
fn wire_shapes() {
    let a: ActionKind =
        serde_json::from_str(r#"{"kind":"press_key","key":"Enter","modifiers":{"shift":true}}"#).unwrap();
    assert_eq!(a, ActionKind::press_key("Shift+Enter"));
    let a: ActionKind = serde_json::from_str(r#"{"kind":"close_tab","opened_by_agent":false}"#).unwrap();
    assert_eq!(a, ActionKind::CloseTab { opened_by_agent: false });
    assert!(serde_json::from_str::<ActionKind>(r#"{"kind":"type","submit":false,"risk":"low"}"#).is_err());
    assert!(serde_json::from_str::<ElementFacts>(r#"{"name":"x","approved":true}"#).is_err());
    let el: ElementFacts = serde_json::from_str(r#"{"role":"button","name":"Send"}"#).unwrap();
    assert!(!el.form_is_search);
    assert_eq!(serde_json::to_string(&RiskLevel::High).unwrap(), "\"high\"");
    assert!(RiskLevel::Low < RiskLevel::Medium && RiskLevel::Medium < RiskLevel::High);
}
