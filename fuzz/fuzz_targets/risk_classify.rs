//! `shared::risk::classify` on any action, element and URL built from the
//! input (words from the rules' vocabulary mixed with arbitrary text): no
//! panic, and a classification always has a level.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use shared::risk::{ActionKind, ElementFacts, Modifiers, OptionFacts, classify};
use shared::sensitive::SensitiveKind;

const WORDS: &[&str] = &[
    "delete",
    "Delete account",
    "pay",
    "Pay now",
    "buy",
    "submit",
    "Continue",
    "send",
    "transfer",
    "löschen",
    "支払う",
    "削除",
    "удалить",
    "حذف",
    "Dеlеtе",
    "𝐃𝐞𝐥𝐞𝐭𝐞",
    "ｄｅｌｅｔｅ",
    "button",
    "link",
    "menuitem",
    "textbox",
    "checkbox",
    "option",
    "submit",
    "password",
    "https://shop.example/checkout",
    "https://bank.example/account/close",
    "/account/delete?confirm=1",
    "?action=delete",
    "post",
    "get",
    "hidden:csrf#ab12",
    "🗑",
    "trash",
    "Cancel",
];

fn text(u: &mut Unstructured) -> Result<String> {
    let mut s = String::new();
    for _ in 0..u.int_in_range(0..=4)? {
        if u.arbitrary()? {
            s.push_str(u.choose(WORDS)?);
        } else {
            s.push_str(u.arbitrary::<&str>()?);
        }
        s.push(' ');
    }
    Ok(s)
}

fn texts(u: &mut Unstructured) -> Result<Vec<String>> {
    (0..u.int_in_range(0..=3)?).map(|_| text(u)).collect()
}

fn action(u: &mut Unstructured) -> Result<ActionKind> {
    Ok(match u.int_in_range(0..=15)? {
        0 => ActionKind::Click,
        1 => ActionKind::Type { submit: u.arbitrary()? },
        2 => ActionKind::FillForm { submit: u.arbitrary()? },
        3 => ActionKind::SelectOption { options: texts(u)? },
        4 => ActionKind::PressKey {
            key: text(u)?,
            modifiers: Modifiers {
                shift: u.arbitrary()?,
                ctrl: u.arbitrary()?,
                alt: u.arbitrary()?,
                meta: u.arbitrary()?,
            },
        },
        5 => ActionKind::Scroll,
        6 => ActionKind::Hover,
        7 => ActionKind::WaitFor,
        8 => ActionKind::Screenshot,
        9 => ActionKind::Snapshot,
        10 => ActionKind::Navigate,
        11 => ActionKind::Upload,
        12 => ActionKind::Download { risky: u.arbitrary()? },
        13 => ActionKind::CloseTab { opened_by_agent: u.arbitrary()? },
        _ => ActionKind::Click,
    })
}

fn facts(u: &mut Unstructured) -> Result<ElementFacts> {
    Ok(ElementFacts {
        role: text(u)?,
        name: text(u)?,
        input_type: text(u)?,
        editable: u.arbitrary()?,
        is_submit_button: u.arbitrary()?,
        in_form: u.arbitrary()?,
        form_is_search: u.arbitrary()?,
        is_rich_text: u.arbitrary()?,
        consent_hint: u.arbitrary()?,
        context: texts(u)?,
        visible_text: text(u)?,
        target: text(u)?,
        form_method: text(u)?,
        form_fields: texts(u)?,
        options: (0..u.int_in_range(0..=3)?)
            .map(|_| Ok(OptionFacts { value: text(u)?, label: text(u)?, disabled: u.arbitrary()? }))
            .collect::<Result<_>>()?,
        ..Default::default()
    })
}

fn run(u: &mut Unstructured) -> Result<()> {
    let action = action(u)?;
    let element = if u.arbitrary()? { Some(facts(u)?) } else { None };
    let url = text(u)?;
    let sensitive = if u.arbitrary()? { Some(*u.choose(&SensitiveKind::ALL)?) } else { None };
    let c = classify(&action, element.as_ref(), url.trim(), sensitive);
    let _ = format!("{c:?}");
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(&mut Unstructured::new(data));
});
