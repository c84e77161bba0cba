//! Chrome DevTools Recorder JSON (a `UserFlow`, the format of DevTools'
//! Recorder panel and `@puppeteer/replay`) in and out. Pure conversions,
//! no IO (docs/design.md, "Recording and flows").
//!
//! # Export ([`export`])
//!
//! `{title, steps}`: a flow's `navigate` steps become `navigate`, clicks
//! and checkbox/radio changes `click`, fills and selections `change` (a
//! selection by the option's `value` attribute when it was recorded, as
//! Recorder replayers select by value), key presses `keyDown` + `keyUp`. Each element step's `selectors` are
//! alternatives, each an array of one selector: `aria/Name[role="role"]`
//! first (when the element has a name and a role), then CSS built from
//! the locators (id, `name`, test id, `aria-label`, the CSS path), then
//! `xpath/…` and `text/…`. A step followed by a step on another page
//! carries an `assertedEvents` navigation, so a replayer waits for it.
//! A parameter is written as the placeholder `{{name}}`, never as its
//! default or a secret's value.
//!
//! # Import ([`import`])
//!
//! `navigate`, `click`, `change` and `keyDown` become steps; `keyUp`,
//! `setViewport`, `scroll`, `hover`, `waitForElement` and `close` are
//! dropped (replay waits for each element itself), and so is the `keyDown`
//! of a modifier alone ([`MODIFIER_KEYS`]). `waitForExpression`,
//! `customStep` and `emulateNetworkConditions` evaluate code or change the
//! browser and are refused, all of them listed, and nothing is imported;
//! so are `doubleClick` (not a step a flow has), a click with another
//! button than the primary one, steps in another frame or target (`target`
//! other than `"main"`), and unknown types. Fields a replay does not need
//! (`offsetX`/`offsetY`, `duration`, `deviceType`, `timeout`,
//! `assertedEvents` other than navigations) are ignored. The title becomes
//! the flow's name ([`name_from_title`]: DevTools' "Recording 12/3/2026 at
//! 7:52:10 PM" has characters a name does not allow).
//!
//! Selectors: each entry of `selectors` is an alternative, itself a chain
//! (an array: each part found inside the previous one). The first `aria/`
//! selector gives the descriptor's name, and its role when it says
//! `[role="…"]` (Puppeteer's syntax, [`parse_aria`]): `aria/Large tin` —
//! what DevTools writes when the name alone is unique — knows no role, and
//! replay treats the role as unknown, never as different
//! (`shared::replay`). Of an ARIA chain only the last part is read. `#id`,
//! `pierce/#id` and DevTools' XPath `//*[@id="id"]` are one id locator;
//! `[data-testid='x']` a test id; other CSS and `pierce/` selectors CSS
//! locators; `xpath/` and `text/` their own. Other chains (into shadow
//! roots) are not read: replay searches the top document, where their
//! last part alone could name another element. A `change` whose value is
//! `{{name}}` fills parameter `name`; one aimed at a sensitive field
//! (`shared::record::descriptor_sensitivity`) never keeps its value: it
//! becomes a secret parameter supplied at run time; other personal-looking
//! values become parameters with the value as default
//! (`shared::record::keep_value`). Errors name the step (1-based, as in
//! the file).

use serde_json::{Map, Value as Json, json};
use shared::flow::{
    Descriptor, Flow, Locator, MAX_LOCATORS, MAX_STEPS, Param, ParamKind, Step, StepAction, Value, is_valid_param_name,
    step_url,
};

/// Why a Recorder file is refused (the message names the steps).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RecorderError(pub String);

/// Step types that evaluate code or change the browser: never imported.
pub const REFUSED_STEP_TYPES: &[&str] = &["waitForExpression", "customStep", "emulateNetworkConditions"];
/// Step types dropped on import: they change nothing a flow replays.
pub const DROPPED_STEP_TYPES: &[&str] = &["keyUp", "setViewport", "scroll", "hover", "waitForElement", "close"];

/// Keys that do nothing on their own; their `keyDown` is dropped.
pub const MODIFIER_KEYS: &[&str] = &["Shift", "Control", "Alt", "Meta", "AltGraph", "CapsLock"];

/// A flow name from a Recorder title: DevTools names a recording
/// "Recording 12/3/2026 at 7:52:10 PM"; characters a flow name does not
/// allow (`shared::flow::check_flow_name`) become `-`, at most 64 kept.
pub fn name_from_title(title: &str) -> String {
    let mapped: String = title
        .trim()
        .chars()
        .map(|c| if c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.') { c } else { '-' })
        .collect();
    let mut name: String = mapped
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .take(shared::flow::MAX_FLOW_NAME_CHARS)
        .collect();
    name.truncate(name.trim_end().len());
    name
}

/// The placeholder a parameter is exported as.
pub fn placeholder(param: &str) -> String {
    format!("{{{{{param}}}}}")
}

/// The parameter a `{{name}}` placeholder names.
fn parse_placeholder(s: &str) -> Option<&str> {
    let name = s.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    is_valid_param_name(name).then_some(name)
}

// ---------------------------------------------------------------------------
// Export

/// A flow as a Recorder `UserFlow`.
pub fn export(flow: &Flow) -> Json {
    let mut steps = Vec::new();
    for (i, step) in flow.steps.iter().enumerate() {
        let next_url = flow.steps.get(i + 1).map(|s| s.url.as_str());
        let navigates = |to: Option<&str>| match to {
            Some(to) if to != step.url => json!([{ "type": "navigation", "url": to, "title": "" }]),
            _ => json!([]),
        };
        let value = |v: &Value| match v {
            Value::Literal(s) => s.clone(),
            Value::Param(p) => placeholder(p),
        };
        let selectors = || step.target.as_ref().map(selectors).unwrap_or_default();
        let mut out = match &step.action {
            StepAction::Navigate { url } => {
                let mut s = json!({ "type": "navigate", "url": url });
                s["assertedEvents"] = json!([{ "type": "navigation", "url": url, "title": step.title }]);
                steps.push(s);
                continue;
            }
            StepAction::Click | StepAction::Check { .. } => {
                json!({ "type": "click", "selectors": selectors(), "offsetX": 1, "offsetY": 1 })
            }
            // A Recorder replayer selects by the option's value attribute.
            StepAction::Select { value: Value::Literal(_), option: Some(o) } => {
                json!({ "type": "change", "selectors": selectors(), "value": o })
            }
            StepAction::Fill { value: v } | StepAction::Select { value: v, .. } => {
                json!({ "type": "change", "selectors": selectors(), "value": value(v) })
            }
            StepAction::PressKey { key } => {
                // The key press navigates on keyDown: a replayer waits there.
                let mut down = json!({ "type": "keyDown", "key": key });
                let events = navigates(next_url);
                if events.as_array().is_some_and(|a| !a.is_empty()) {
                    down["assertedEvents"] = events;
                }
                steps.push(down);
                steps.push(json!({ "type": "keyUp", "key": key }));
                continue;
            }
        };
        let events = navigates(next_url);
        if events.as_array().is_some_and(|a| !a.is_empty()) {
            out["assertedEvents"] = events;
        }
        steps.push(out);
    }
    json!({ "title": flow.name, "steps": steps })
}

/// A descriptor's selectors, as Recorder alternatives (each an array of
/// one selector): ARIA first, then CSS, XPath and text.
pub fn selectors(d: &Descriptor) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    if let Some(aria) = aria_selector(d) {
        out.push(aria);
    }
    let tag = if d.tag.chars().all(|c| c.is_ascii_alphanumeric()) { d.tag.as_str() } else { "" };
    for l in &d.locators {
        let s = match l {
            Locator::Id(id) => format!("#{}", css_ident(id)),
            Locator::Name(n) => format!("{tag}[name={}]", css_string(n)),
            Locator::TestId { attr, value } => format!("[{}={}]", css_ident(attr), css_string(value)),
            Locator::AriaLabel(v) => format!("{tag}[aria-label={}]", css_string(v)),
            Locator::Css(css) => css.clone(),
            Locator::XPath(x) => format!("xpath/{x}"),
            Locator::Text(t) => format!("text/{t}"),
        };
        out.push(s);
    }
    out.into_iter().map(|s| vec![s]).collect()
}

/// `aria/Name[role="role"]`; `None` when there is no name, or the name or
/// role would need escaping (the ARIA selector syntax has none).
fn aria_selector(d: &Descriptor) -> Option<String> {
    if !aria_plain(&d.name) {
        return None;
    }
    if d.role.is_empty() {
        return Some(format!("aria/{}", d.name));
    }
    aria_plain(&d.role).then(|| format!("aria/{}[role=\"{}\"]", d.name, d.role))
}

/// Whether `s` can stand in an ARIA selector as it is: not empty, and none
/// of the characters the syntax gives a meaning (it has no escapes). The
/// one rule for export and import: an `aria/` selector whose name or role
/// is not plain is not read (the fuzz target `flow_import` found a name
/// with a `[` that imported but could not be exported again).
fn aria_plain(s: &str) -> bool {
    !s.is_empty() && !s.contains(['[', ']', '"', '\\', '\n', '\r'])
}

/// A CSS identifier, escaped (`CSS.escape`'s rules, enough for ids).
fn css_ident(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        let leading_digit = c.is_ascii_digit() && (i == 0 || (i == 1 && s.starts_with('-')));
        if leading_digit {
            out.push_str(&format!("\\{:x} ", c as u32));
        } else if c.is_ascii_alphanumeric() || c == '-' || c == '_' || !c.is_ascii() {
            out.push(c);
        } else if c.is_control() {
            out.push_str(&format!("\\{:x} ", c as u32));
        } else {
            out.push('\\');
            out.push(c);
        }
    }
    out
}

/// A CSS string in double quotes.
fn css_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push_str(&format!("\\{:x} ", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------
// Import

/// A Recorder `UserFlow` as a flow (named after its `title`; `created`
/// left empty for the caller). Checked with `shared::record::check_flow`
/// only by the caller; this refuses what the Recorder format allows and a
/// flow does not.
pub fn import(json: &Json) -> Result<Flow, RecorderError> {
    let err = |m: String| RecorderError(m);
    let obj = json.as_object().ok_or_else(|| err("a Recorder file is a JSON object {title, steps}".into()))?;
    let title =
        obj.get("title").and_then(Json::as_str).ok_or_else(|| err("the file has no \"title\" string".into()))?;
    let steps =
        obj.get("steps").and_then(Json::as_array).ok_or_else(|| err("the file has no \"steps\" array".into()))?;
    if steps.len() > MAX_STEPS * 4 {
        return Err(err(format!("the file has {} steps; a flow has at most {MAX_STEPS}", steps.len())));
    }
    // Every refused step first, so the person sees all of them at once.
    let refused: Vec<String> = steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let t = s.get("type").and_then(Json::as_str)?;
            REFUSED_STEP_TYPES.contains(&t).then(|| format!("step {} ({t})", i + 1))
        })
        .collect();
    if !refused.is_empty() {
        return Err(err(format!(
            "refused: {} would evaluate code or change the browser ({} are never imported); nothing was imported",
            refused.join(", "),
            REFUSED_STEP_TYPES.join(", ")
        )));
    }
    let mut flow = Flow { name: name_from_title(title), created: String::new(), steps: Vec::new(), params: Vec::new() };
    let mut page: Option<String> = None;
    for (i, raw) in steps.iter().enumerate() {
        let at = |m: String| RecorderError(format!("step {}: {m}", i + 1));
        let s = raw.as_object().ok_or_else(|| at("a step is a JSON object".into()))?;
        let kind = s.get("type").and_then(Json::as_str).ok_or_else(|| at("a step has a \"type\" string".into()))?;
        if s.get("target").and_then(Json::as_str).is_some_and(|t| t != "main") {
            return Err(at("steps in other targets (pop-ups, other pages) are not supported".into()));
        }
        if s.get("frame").and_then(Json::as_array).is_some_and(|f| !f.is_empty()) {
            return Err(at("steps in frames are not supported".into()));
        }
        if DROPPED_STEP_TYPES.contains(&kind) {
            continue;
        }
        let step = match kind {
            "navigate" => {
                let url = s.get("url").and_then(Json::as_str).ok_or_else(|| at("navigate has no \"url\"".into()))?;
                let url = shared::url::validate_navigation_url(url).map_err(|e| at(e.message))?;
                page = Some(step_url(&url));
                Step {
                    action: StepAction::Navigate { url: step_url(&url) },
                    target: None,
                    url: step_url(&url),
                    title: String::new(),
                    risk: None,
                }
            }
            "click" | "change" => {
                let url = page.clone().ok_or_else(|| at("the flow must start with a navigate step".into()))?;
                // A right or middle click (context menu, new tab) is not
                // the left click a flow replays.
                if let Some(b) = s.get("button").and_then(Json::as_str).filter(|b| *b != "primary") {
                    return Err(at(format!(
                        "a click with the {:?} button is not supported (only the primary button)",
                        b.chars().take(20).collect::<String>()
                    )));
                }
                let target = descriptor(s).map_err(at)?;
                let action = if kind == "click" {
                    StepAction::Click
                } else {
                    let v = s
                        .get("value")
                        .and_then(Json::as_str)
                        .ok_or_else(|| at("change has no \"value\" string".into()))?;
                    let value = change_value(&target, v, &mut flow.params).map_err(at)?;
                    if is_select(&target) {
                        // Recorder files choose by value; replay matches a
                        // value or a label (`shared::risk::chosen_option`).
                        let option = matches!(value, Value::Literal(_)).then(|| v.to_string());
                        StepAction::Select { value, option }
                    } else {
                        StepAction::Fill { value }
                    }
                };
                Step { action, target: Some(target), url, title: String::new(), risk: None }
            }
            "keyDown" => {
                let url = page.clone().ok_or_else(|| at("the flow must start with a navigate step".into()))?;
                let key = s.get("key").and_then(Json::as_str).ok_or_else(|| at("keyDown has no \"key\"".into()))?;
                let key = if key == "\r" || key == "\n" || key == "NumpadEnter" { "Enter" } else { key };
                // A modifier pressed alone does nothing a flow replays.
                if MODIFIER_KEYS.contains(&key) {
                    continue;
                }
                if !shared::record::STEP_KEYS.contains(&key) {
                    return Err(at(format!(
                        "key {:?} is not supported (only {})",
                        key.chars().take(20).collect::<String>(),
                        shared::record::STEP_KEYS.join(", ")
                    )));
                }
                Step {
                    action: StepAction::PressKey { key: key.to_string() },
                    target: None,
                    url,
                    title: String::new(),
                    risk: None,
                }
            }
            "doubleClick" => return Err(at("doubleClick is not supported".into())),
            other => {
                return Err(at(format!("unknown step type {:?}", other.chars().take(40).collect::<String>())));
            }
        };
        // A navigation the step asserts: the page the next steps are on.
        if let Some(to) = asserted_navigation(s) {
            let to =
                shared::url::validate_navigation_url(to).map_err(|e| at(format!("assertedEvents: {}", e.message)))?;
            page = Some(step_url(&to));
        }
        if let Err(p) = shared::record::check_flow(&Flow { steps: vec![step.clone()], ..flow.clone() })
            && p.step.is_some()
        {
            return Err(at(p.message));
        }
        flow.steps.push(step);
    }
    if flow.steps.is_empty() {
        return Err(err("the file has no step a flow can replay".into()));
    }
    Ok(flow)
}

fn asserted_navigation(s: &Map<String, Json>) -> Option<&str> {
    s.get("assertedEvents")?
        .as_array()?
        .iter()
        .filter(|e| e.get("type").and_then(Json::as_str) == Some("navigation"))
        .find_map(|e| e.get("url")?.as_str().filter(|u| !u.is_empty()))
}

/// The descriptor a step's `selectors` describe.
fn descriptor(s: &Map<String, Json>) -> Result<Descriptor, String> {
    let list = s.get("selectors").and_then(Json::as_array).ok_or("the step has no \"selectors\" array")?;
    let mut d = Descriptor::default();
    for sel in list {
        // An array is a chain: each part is looked up inside the previous
        // one's result (or shadow root); the last one names the element.
        let (one, chained) = match sel {
            Json::String(s) => (s.as_str(), false),
            Json::Array(chain) => {
                if chain.iter().any(|c| !c.is_string()) {
                    return Err("a selector chain holds strings".into());
                }
                let last = chain.last().and_then(Json::as_str).ok_or("a selector chain holds strings")?;
                (last, chain.len() > 1)
            }
            _ => return Err("a selector is a string or an array of strings".into()),
        };
        if let Some(aria) = one.strip_prefix("aria/") {
            // An ARIA chain narrows by ancestors' names; the element's own
            // name is the last part (the scope is dropped: several
            // elements with that name make the step ambiguous, never a
            // guess).
            if let Some((name, role)) = parse_aria(aria)
                && d.name.is_empty()
                && d.role.is_empty()
                && aria_plain(&name)
                && (role.is_empty() || aria_plain(&role))
            {
                d.name = name;
                d.role = role;
            }
            continue;
        }
        if chained {
            // A CSS, XPath or pierce chain reaches into shadow roots (or
            // frames); replay looks in the top document only, where its
            // last part alone could name another element. Not read.
            continue;
        }
        let locator = locator_of(one);
        // `pierce/aria/…` and the like: a CSS selector that the export
        // would write back as another kind of selector. Not read.
        if let Locator::Css(css) = &locator
            && ["aria/", "xpath/", "text/", "pierce/"].iter().any(|p| css.starts_with(p))
        {
            continue;
        }
        // The tag a CSS selector names (`select#size`); XPath and text
        // selectors name none.
        if d.tag.is_empty()
            && let Locator::Css(css) = &locator
        {
            d.tag = leading_tag(css).to_string();
        }
        if d.locators.len() < MAX_LOCATORS && !d.locators.contains(&locator) {
            d.locators.push(locator);
        }
    }
    if d.name.is_empty() && d.locators.is_empty() {
        return Err("the step's selectors name no element".into());
    }
    shared::limits::truncate_chars(&mut d.name, shared::limits::MAX_NAME_CHARS);
    Ok(d)
}

/// One non-ARIA selector as a locator: `#id`, `pierce/#id` and the
/// Recorder's id XPath `//*[@id="id"]` are the same id; `[data-testid='x']`
/// (a test-id attribute of `shared::flow::TEST_ID_ATTRS`) a test id; other
/// CSS and `pierce/` selectors CSS; `xpath/` and `text/` their own.
fn locator_of(one: &str) -> Locator {
    if let Some(x) = one.strip_prefix("xpath/") {
        return match xpath_id(x) {
            Some(id) => Locator::Id(id.to_string()),
            None => Locator::XPath(x.to_string()),
        };
    }
    if let Some(t) = one.strip_prefix("text/") {
        return Locator::Text(t.to_string());
    }
    let css = one.strip_prefix("pierce/").unwrap_or(one);
    if let Some(id) = plain_id(css) {
        return Locator::Id(id.to_string());
    }
    if let Some((attr, value)) = test_id(css) {
        return Locator::TestId { attr: attr.to_string(), value: value.to_string() };
    }
    Locator::Css(css.to_string())
}

/// `//*[@id="size-l"]` (how the Recorder writes an XPath for an element
/// with an id) → `size-l`.
fn xpath_id(x: &str) -> Option<&str> {
    let id = x.strip_prefix("//*[@id=\"")?.strip_suffix("\"]")?;
    plain_id_chars(id).then_some(id)
}

/// `[data-testid='add']` or `[data-testid="add"]` with a known test-id
/// attribute and a value that needs no escape.
fn test_id(css: &str) -> Option<(&str, &str)> {
    let inner = css.strip_prefix('[')?.strip_suffix(']')?;
    let (attr, quoted) = inner.split_once('=')?;
    let value = quoted
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .or_else(|| quoted.strip_prefix('"').and_then(|v| v.strip_suffix('"')))?;
    (shared::flow::TEST_ID_ATTRS.contains(&attr) && plain_id_chars(value)).then_some((attr, value))
}

/// Puppeteer's ARIA selector: an accessible name with optional
/// `[name="…"]` and `[role="…"]` attributes (either quote, in any order;
/// `[name=…]` wins over the bare name; runs of spaces collapsed). `None`
/// for an attribute Puppeteer does not know (it refuses the selector), a
/// malformed attribute, or no name (a role alone matches any name: not an
/// element a step can be sure of).
fn parse_aria(s: &str) -> Option<(String, String)> {
    let mut bare = String::new();
    let (mut name, mut role) = (None::<String>, None::<String>);
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        bare.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let eq = after.find('=')?;
        let attr = after[..eq].trim();
        let v = after[eq + 1..].trim_start();
        let quote = v.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let close = v[1..].find(quote)? + 1;
        let value = v[1..close].to_string();
        rest = v[close + 1..].trim_start().strip_prefix(']')?;
        match attr {
            "name" => name = Some(value),
            "role" => role = Some(value),
            _ => return None,
        }
    }
    bare.push_str(rest);
    let norm = |v: &str| v.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    let name = norm(&name.unwrap_or(bare));
    if name.is_empty() {
        return None;
    }
    Some((name, role.map(|r| norm(&r)).unwrap_or_default()))
}

/// `#ident` with nothing CSS-special after it.
fn plain_id(s: &str) -> Option<&str> {
    let id = s.strip_prefix('#')?;
    plain_id_chars(id).then_some(id)
}

/// Not empty; ASCII letters, digits, `-` and `_` only.
fn plain_id_chars(id: &str) -> bool {
    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The tag a CSS selector's last compound starts with (`form > select#s` → `select`).
fn leading_tag(css: &str) -> &str {
    let last = css.rsplit([' ', '>', '+', '~']).next().unwrap_or("");
    let end = last.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(last.len());
    &last[..end]
}

fn is_select(d: &Descriptor) -> bool {
    d.tag.eq_ignore_ascii_case("select") || d.role == "combobox" && d.tag.is_empty()
}

/// A `change` step's value in the flow: its placeholder's parameter, a
/// secret parameter for a sensitive field, or what `keep_value` keeps.
fn change_value(target: &Descriptor, v: &str, params: &mut Vec<Param>) -> Result<Value, String> {
    let sensitive = shared::record::descriptor_sensitivity(target).is_some();
    if let Some(name) = parse_placeholder(v) {
        let kind = if sensitive {
            ParamKind::Secret
        } else {
            shared::record::field_kind(target, "").unwrap_or(ParamKind::Text)
        };
        if let Some(p) = params.iter().find(|p| p.name == name) {
            if sensitive && p.kind != ParamKind::Secret {
                return Err(format!("parameter {name:?} fills a sensitive field and another one that is not"));
            }
        } else {
            if params.len() >= shared::flow::MAX_PARAMS {
                return Err(format!("a flow has at most {} parameters", shared::flow::MAX_PARAMS));
            }
            params.push(Param { name: name.to_string(), kind, default: None });
        }
        return Ok(Value::Param(name.to_string()));
    }
    if v.chars().count() > shared::flow::MAX_VALUE_CHARS {
        return Err(format!("value is over {} characters", shared::flow::MAX_VALUE_CHARS));
    }
    if is_select(target) {
        return shared::record::keep_choice(target, "", sensitive, v, true, params);
    }
    shared::record::keep_value(target, "", sensitive, Some(v), true, params)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by `cargo xtask fuzz` (`flow_import`): an ARIA name with a `[`
    /// imported, but the exporter cannot write it, so the exported file did
    /// not import again. Such a selector is not read; with nothing else the
    /// step names no element, and every flow that imports exports and
    /// imports again.
    #[test]
    fn an_aria_selector_the_exporter_cannot_write_is_not_read() {
        let file = |sel: &str| {
            json!({ "title": "t", "steps": [
                { "type": "navigate", "url": "https://shop.example/a.html" },
                { "type": "click", "selectors": [[sel]] },
            ] })
        };
        let err = import(&file("aria/Continue to review[rreview")).unwrap_err();
        assert!(err.to_string().contains("step 2") && err.to_string().contains("name no element"), "{err}");
        assert!(import(&file("aria/Go[role=\"a\\\"b\"]")).is_err(), "a role with a quote");
        for sel in [
            "aria/Continue to review[role=\"button\"]",
            "aria/Continue",
            "#go",
            "text/Go [now]",
            "aria/[name=\"Go\"][role='button']",
            "aria/Go[role=\"button\"][name=\"Stop\"]",
            "aria/It's  here",
            "pierce/#go",
            "xpath///*[@id=\"go\"]",
            "[data-testid='go']",
        ] {
            let flow = import(&file(sel)).unwrap_or_else(|e| panic!("{sel}: {e}"));
            import(&export(&flow)).unwrap_or_else(|e| panic!("{sel}: the export does not import: {e}"));
        }
    }

    fn fixture(name: &str) -> Json {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/recorder").join(name);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    /// The Recorder files in `fixtures/recorder/`, written the way Chrome
    /// DevTools writes them: `aria/Name` without a role, the same id as
    /// CSS, XPath and `pierce/`, test ids, text selectors.
    #[test]
    fn devtools_files_import_with_names_and_no_role() {
        let flow = import(&fixture("order-large-tin.json")).unwrap();
        assert_eq!(flow.name, "Order a large tin");
        let kinds: Vec<String> = flow
            .steps
            .iter()
            .map(|s| {
                let t = s.target.as_ref().map(|d| format!(" {:?}/{:?}", d.role, d.name)).unwrap_or_default();
                let a = match &s.action {
                    StepAction::Navigate { .. } => "navigate".to_string(),
                    StepAction::Click => "click".into(),
                    StepAction::Fill { value } => format!("fill {value:?}"),
                    StepAction::Select { value, option } => format!("select {value:?} {option:?}"),
                    StepAction::Check { checked } => format!("check {checked}"),
                    StepAction::PressKey { key } => format!("key {key}"),
                };
                format!("{a}{t}")
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "navigate",
                "click \"\"/\"Search tins\"",
                "fill Literal(\"tea\") \"\"/\"Search tins\"",
                "key Enter",
                "click \"\"/\"Large tin\"",
                "click \"\"/\"Tea\"",
                // Nothing in the selectors says `<select>`: a fill, which
                // replay turns into a choice on the live `<select>`
                // (`shared::replay::fill_chooses`).
                "fill Literal(\"darjeeling\") \"\"/\"Tea\"",
                "click \"\"/\"Gift wrap\"",
                "click \"\"/\"Engraving\"",
                "fill Param(\"engraving\") \"\"/\"Engraving\"",
                "key Tab",
                "click \"link\"/\"Size guide\"",
                "click \"\"/\"Add to cart\"",
            ]
        );
        // Capitalised words look like a name: a parameter, the text its default.
        assert_eq!(flow.params[0].default.as_deref(), Some("Happy birthday"));
        // `#size-l`, `xpath///*[@id="size-l"]` and `pierce/#size-l` are one id.
        assert_eq!(flow.steps[4].target.as_ref().unwrap().locators, [Locator::Id("size-l".into())]);
        assert_eq!(flow.steps[4].url, "http://localhost:8080/tins/order.html", "the page after Enter, no query");
        let add = flow.steps[12].target.as_ref().unwrap();
        assert_eq!(
            add.locators,
            [
                Locator::TestId { attr: "data-testid".into(), value: "add-to-cart".into() },
                Locator::XPath("//*[@data-testid=\"add-to-cart\"]".into()),
                Locator::Text("Add to cart".into()),
            ]
        );

        let flow = import(&fixture("browse-small-tin.json")).unwrap();
        assert_eq!(flow.name, "Recording 12-3-2026 at 7-52-10 PM", "DevTools' default title is a valid name");
        assert_eq!(flow.steps.len(), 4);
        assert_eq!(flow.steps[2].url, "http://localhost:8080/tins/order.html", "after the link's navigation");

        let flow = import(&fixture("gift-sencha.json")).unwrap();
        let actions: Vec<&StepAction> = flow.steps.iter().map(|s| &s.action).collect();
        assert_eq!(actions.len(), 6, "waitForElement, scroll, hover, Shift dropped: {actions:?}");
        assert!(actions.iter().all(|a| !matches!(a, StepAction::PressKey { .. })));

        // Every fixture exports and imports again to the same steps.
        for f in ["order-large-tin.json", "browse-small-tin.json", "gift-sencha.json"] {
            let flow = import(&fixture(f)).unwrap();
            let back = import(&export(&flow)).unwrap_or_else(|e| panic!("{f}: {e}"));
            assert_eq!(back.steps, flow.steps, "{f}");
        }
    }

    #[test]
    fn aria_selectors_follow_puppeteer() {
        for (sel, want) in [
            ("Large tin", Some(("Large tin", ""))),
            ("Large tin[role=\"radio\"]", Some(("Large tin", "radio"))),
            ("Large tin[role='radio']", Some(("Large tin", "radio"))),
            ("[role=\"radio\"][name=\"Large tin\"]", Some(("Large tin", "radio"))),
            ("[name=\"Large tin\"]", Some(("Large tin", ""))),
            ("Ignored[name=\"Large tin\"]", Some(("Large tin", ""))),
            ("  Large   tin  ", Some(("Large tin", ""))),
            ("Large tin [ role = \"radio\" ]", Some(("Large tin", "radio"))),
            ("[role=\"radio\"]", None),
            ("Large tin[level=\"2\"]", None),
            ("Large tin[role=radio]", None),
            ("Large tin[role=\"radio\"", None),
            ("", None),
        ] {
            let got = parse_aria(sel);
            assert_eq!(got.as_ref().map(|(n, r)| (n.as_str(), r.as_str())), want, "{sel:?}");
        }
    }

    #[test]
    fn selector_forms() {
        let step = |sels: Json| {
            let file = json!({ "title": "t", "steps": [
                { "type": "navigate", "url": "https://shop.example/a.html" },
                { "type": "click", "target": "main", "selectors": sels, "offsetX": 1, "offsetY": 1 },
            ] });
            import(&file).map(|f| f.steps[1].target.clone().unwrap())
        };
        // An ARIA chain: the last part names the element.
        let d = step(json!([["aria/Size", "aria/Large tin"], ["#size-l"]])).unwrap();
        assert_eq!((d.name.as_str(), d.role.as_str()), ("Large tin", ""));
        // A CSS chain into a shadow root is not read: alone, "button"
        // would name whatever button the top document has.
        let d = step(json!([["aria/Buy"], ["my-widget", "button"], ["#buy"]])).unwrap();
        assert_eq!(d.locators, [Locator::Id("buy".into())]);
        assert!(step(json!([["my-widget", "button"]])).unwrap_err().0.contains("name no element"));
        // The first ARIA selector wins; a test id with double quotes too.
        let d =
            step(json!([["aria/One"], ["aria/Two[role=\"button\"]"], ["[data-qa=\"go\"]"], ["[data-x='y']"]])).unwrap();
        assert_eq!((d.name.as_str(), d.role.as_str()), ("One", ""));
        assert_eq!(
            d.locators,
            [Locator::TestId { attr: "data-qa".into(), value: "go".into() }, Locator::Css("[data-x='y']".into())]
        );
        // A CSS selector the export would write back as an ARIA selector
        // is not read (every imported flow must export and import again).
        let d = step(json!([["pierce/aria/[x='1']"], ["#ok"]])).unwrap();
        assert_eq!((d.name.as_str(), d.locators.as_slice()), ("", &[Locator::Id("ok".into())][..]));
        // An XPath with an id that needs escaping stays an XPath.
        let d = step(json!([["xpath///*[@id=\"a b\"]"]])).unwrap();
        assert_eq!(d.locators, [Locator::XPath("//*[@id=\"a b\"]".into())]);
        // Right and middle clicks are not replayed as left clicks.
        for button in ["secondary", "auxiliary"] {
            let file = json!({ "title": "t", "steps": [
                { "type": "navigate", "url": "https://shop.example/a.html" },
                { "type": "click", "selectors": [["#a"]], "button": button, "offsetX": 1, "offsetY": 1 },
            ] });
            let e = import(&file).unwrap_err().0;
            assert!(e.starts_with("step 2: a click with the") && e.contains(button), "{e}");
        }
        let file = json!({ "title": "t", "steps": [
            { "type": "navigate", "url": "https://shop.example/a.html" },
            { "type": "click", "selectors": [["#a"]], "button": "primary", "offsetX": 1, "offsetY": 1 },
        ] });
        assert!(import(&file).is_ok());
    }

    #[test]
    fn titles_become_flow_names() {
        for (title, name) in [
            ("Recording 12/3/2026 at 7:52:10 PM", "Recording 12-3-2026 at 7-52-10 PM"),
            ("Order a large tin", "Order a large tin"),
            ("  /etc/passwd ", "etc-passwd"),
            ("Bestellung: Größe L", "Bestellung- Größe L"),
        ] {
            assert_eq!(name_from_title(title), name);
            assert_eq!(shared::flow::check_flow_name(name), Ok(()), "{name}");
        }
        assert_eq!(name_from_title(&"x".repeat(100)).len(), 64);
        assert_eq!(name_from_title("???"), "", "nothing usable: check_flow refuses it, --name names it");
    }

    /// A Recorder file as a person writes it by hand, in the documented
    /// schema.
    fn hand_written() -> Json {
        json!({
            "title": "Order boots",
            "steps": [
                { "type": "setViewport", "width": 1280, "height": 800, "deviceScaleFactor": 1,
                  "isMobile": false, "hasTouch": false, "isLandscape": false },
                { "type": "navigate", "url": "http://127.0.0.1:8080/flowshop/",
                  "assertedEvents": [{ "type": "navigation", "url": "http://127.0.0.1:8080/flowshop/", "title": "Shop" }] },
                { "type": "change", "selectors": [["aria/Search[role=\"searchbox\"]"], ["#q"]], "value": "boots" },
                { "type": "keyDown", "key": "Enter",
                  "assertedEvents": [{ "type": "navigation", "url": "http://127.0.0.1:8080/flowshop/results.html?q=boots" }] },
                { "type": "keyUp", "key": "Enter" },
                { "type": "click", "selectors": [["aria/Trail boots[role=\"link\"]"], ["a.product:nth-of-type(1)"]],
                  "offsetX": 3, "offsetY": 4 },
                { "type": "waitForElement", "selectors": ["#size"] },
                { "type": "change", "selectors": [["select#size"]], "value": "M" },
                { "type": "change", "selectors": [["aria/E-mail"], ["input[name=\"email\"]"]], "value": "ada@example.org" },
                { "type": "change", "selectors": [["#password"]], "value": "hunter2" },
                { "type": "change", "selectors": [["aria/Street"]], "value": "{{street}}" },
                { "type": "scroll", "x": 0, "y": 400 },
                { "type": "click", "selectors": [["aria/Place order[role=\"button\"]"], ["xpath//html/body/form/button"], ["text/Place order"]] }
            ]
        })
    }

    #[test]
    fn a_hand_written_file_imports() {
        let flow = import(&hand_written()).unwrap();
        assert_eq!(flow.name, "Order boots");
        let actions: Vec<&StepAction> = flow.steps.iter().map(|s| &s.action).collect();
        assert_eq!(
            actions,
            [
                &StepAction::Navigate { url: "http://127.0.0.1:8080/flowshop/".into() },
                &StepAction::Fill { value: Value::Literal("boots".into()) },
                &StepAction::PressKey { key: "Enter".into() },
                &StepAction::Click,
                &StepAction::Select { value: Value::Literal("M".into()), option: Some("M".into()) },
                &StepAction::Fill { value: Value::Param("e_mail".into()) },
                &StepAction::Fill { value: Value::Param("password".into()) },
                &StepAction::Fill { value: Value::Param("street".into()) },
                &StepAction::Click,
            ]
        );
        let search = flow.steps[1].target.as_ref().unwrap();
        assert_eq!((search.role.as_str(), search.name.as_str()), ("searchbox", "Search"));
        assert_eq!(search.locators, [Locator::Id("q".into())]);
        // The page after the asserted navigation, without its query string.
        assert_eq!(flow.steps[3].url, "http://127.0.0.1:8080/flowshop/results.html");
        let order = flow.steps[8].target.as_ref().unwrap();
        assert_eq!(
            order.locators,
            [Locator::XPath("/html/body/form/button".into()), Locator::Text("Place order".into())]
        );
        let param = |n: &str| flow.params.iter().find(|p| p.name == n).unwrap().clone();
        assert_eq!(
            param("e_mail"),
            Param { name: "e_mail".into(), kind: ParamKind::Email, default: Some("ada@example.org".into()) }
        );
        // The password in the file is never kept: a secret supplied at run time.
        assert_eq!(param("password"), Param { name: "password".into(), kind: ParamKind::Secret, default: None });
        assert_eq!(param("street").default, None);
        assert!(!serde_json::to_string(&flow).unwrap().contains("hunter2"));
        let mut checked = flow.clone();
        checked.created = "2026-12-01T21:00:00Z".into();
        assert_eq!(shared::record::check_flow(&checked), Ok(()));
    }

    #[test]
    fn refused_step_types_are_all_listed() {
        let mut file = hand_written();
        let steps = file["steps"].as_array_mut().unwrap();
        steps.insert(3, json!({ "type": "waitForExpression", "expression": "fetch('/steal')" }));
        steps.push(json!({ "type": "customStep", "name": "x", "parameters": {} }));
        steps.push(json!({ "type": "emulateNetworkConditions", "download": 1, "upload": 1, "latency": 1 }));
        let e = import(&file).unwrap_err().0;
        for want in [
            "step 4 (waitForExpression)",
            "step 15 (customStep)",
            "step 16 (emulateNetworkConditions)",
            "nothing was imported",
        ] {
            assert!(e.contains(want), "{e} should say {want:?}");
        }
    }

    #[test]
    fn malformed_files_name_the_step() {
        let nav = json!({ "type": "navigate", "url": "https://a.example/" });
        for (steps, want) in [
            (json!([{ "type": "click", "selectors": [["#a"]] }]), "step 1: the flow must start with a navigate step"),
            (json!([nav.clone(), { "type": "click" }]), "step 2: the step has no \"selectors\" array"),
            (json!([nav.clone(), { "type": "click", "selectors": [[1]] }]), "step 2: a selector chain holds strings"),
            (json!([nav.clone(), { "type": "change", "selectors": [["#a"]] }]), "step 2: change has no \"value\""),
            (json!([nav.clone(), { "type": "teleport" }]), "step 2: unknown step type \"teleport\""),
            (json!([nav.clone(), { "type": "doubleClick", "selectors": [["#a"]] }]), "step 2: doubleClick"),
            (json!([nav.clone(), { "type": "keyDown", "key": "F12" }]), "step 2: key \"F12\" is not supported"),
            (json!([{ "type": "navigate", "url": "javascript:alert(1)" }]), "step 1: only http:// and https://"),
            (json!([{ "type": "navigate", "url": "file:///etc/passwd" }]), "step 1: only http:// and https://"),
            (json!([nav.clone(), { "type": "click", "selectors": [["#a"]], "frame": [0] }]), "step 2: steps in frames"),
            (
                json!([nav.clone(), { "type": "click", "selectors": [["#a"]], "target": "popup" }]),
                "step 2: steps in other targets",
            ),
            (json!([nav.clone(), "click"]), "step 2: a step is a JSON object"),
            (
                json!([nav.clone(), { "type": "click", "selectors": [[format!("#{}", "a".repeat(400))]] }]),
                "step 2: a locator is empty or over",
            ),
            (
                json!([nav.clone(), { "type": "setViewport" }]).as_array().unwrap()[1..].to_vec().into(),
                "no step a flow can replay",
            ),
        ] {
            let e = import(&json!({ "title": "t", "steps": steps })).unwrap_err().0;
            assert!(e.contains(want), "{e} should say {want:?}");
        }
        assert!(import(&json!({ "steps": [] })).unwrap_err().0.contains("title"));
        assert!(import(&json!([1])).is_err());
    }

    #[test]
    fn export_writes_aria_first_placeholders_and_navigations() {
        let flow = import(&hand_written()).unwrap();
        let out = export(&flow);
        assert_eq!(out["title"], "Order boots");
        let steps = out["steps"].as_array().unwrap();
        let types: Vec<&str> = steps.iter().map(|s| s["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            ["navigate", "change", "keyDown", "keyUp", "click", "change", "change", "change", "change", "click"]
        );
        assert_eq!(steps[1]["selectors"], json!([["aria/Search[role=\"searchbox\"]"], ["#q"]]));
        // The key press leads to the results page: the replayer waits for it on keyDown.
        assert_eq!(steps[2]["assertedEvents"][0]["url"], "http://127.0.0.1:8080/flowshop/results.html");
        assert!(steps[3].get("assertedEvents").is_none());
        assert_eq!(steps[6]["value"], "{{e_mail}}", "a parameter, never its default");
        assert_eq!(steps[7]["value"], "{{password}}");
        let text = out.to_string();
        assert!(!text.contains("ada@example.org") && !text.contains("hunter2"));
        assert_eq!(steps[9]["selectors"][0], json!(["aria/Place order[role=\"button\"]"]));
        // Round trip: the same steps and parameters come back.
        let back = import(&out).unwrap();
        assert_eq!(
            back.steps.iter().map(|s| &s.action).collect::<Vec<_>>(),
            flow.steps.iter().map(|s| &s.action).collect::<Vec<_>>()
        );
        assert_eq!(
            back.params.iter().map(|p| (&p.name, p.kind)).collect::<Vec<_>>(),
            flow.params.iter().map(|p| (&p.name, p.kind)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn css_from_locators_is_escaped() {
        let d = Descriptor {
            role: "textbox".into(),
            name: "Name \"quoted\"".into(),
            tag: "input".into(),
            locators: vec![
                Locator::Id("1st.field".into()),
                Locator::Name("a\"b".into()),
                Locator::TestId { attr: "data-testid".into(), value: "x".into() },
                Locator::AriaLabel("Full name".into()),
                Locator::Css("form > input:nth-of-type(2)".into()),
            ],
            ..Descriptor::default()
        };
        assert_eq!(
            selectors(&d),
            [
                vec!["#\\31 st\\.field".to_string()],
                vec!["input[name=\"a\\\"b\"]".to_string()],
                vec!["[data-testid=\"x\"]".to_string()],
                vec!["input[aria-label=\"Full name\"]".to_string()],
                vec!["form > input:nth-of-type(2)".to_string()],
            ],
            "no aria selector for a name with quotes"
        );
    }
}
