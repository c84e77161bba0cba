//! Site access in the browser (`shared::policy`, "Site access"): the
//! bridge's rules as last sent (`BridgeToExt::SiteRules`, forgotten when a
//! connection ends: the next one sends them again), the popup's "This
//! site" section ([`this_site`]: the access of the web page in front of
//! the window the person used last, decided with the same
//! `shared::policy::SiteRules::access_for` as the bridge) and the person's
//! choices ([`set`]: `ExtToBridge::SetSiteAccess`; the bridge checks that
//! the popup only tightens `config.toml` and answers with the new rules).
//!
//! Only the popup's "This site" buttons and the approval window's "Never
//! on this site" reach [`set`] (`crate::messages::Message::allowed_from`);
//! the bridge enforces the rules, the extension only shows them.

use std::cell::RefCell;

use shared::policy::{SiteAccess, SiteRules};
use shared::protocol::ExtToBridge;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::messages::SiteView;
use crate::util::{obj, to_js};

/// The `chrome.storage.session` key the rules are published under (the
/// popup redraws "This site" when it changes).
pub const KEY: &str = "site_rules";

thread_local! {
    static RULES: RefCell<SiteRules> = RefCell::new(SiteRules::default());
}

/// The bridge's rules now.
pub fn update(rules: SiteRules) {
    RULES.with(|r| *r.borrow_mut() = rules.clone());
    let items = obj(&[(KEY, to_js(&rules))]);
    spawn_local(async move {
        let _ = chrome::storage_session_set(&items).await;
    });
}

/// A connection ended: its rules are not known any more.
pub fn forget() {
    update(SiteRules::default());
}

/// The site of the web page in front of the person and its access
/// (`origin` empty when no web page is in front).
pub async fn this_site() -> SiteView {
    let url = match crate::handoff::current_web_tab().await {
        Some(tab) => match crate::tabs::get_tab(tab).await {
            Ok(t) => crate::tabs::info(t.unchecked_ref()).url,
            Err(_) => String::new(),
        },
        None => String::new(),
    };
    let Some(origin) = shared::url::Origin::of(&url).map(|o| o.to_string()) else { return SiteView::default() };
    let access = RULES.with(|r| r.borrow().access_for(&url));
    SiteView { origin, access: Some(access) }
}

/// The person's choice for `origin`; false when the bridge is not
/// connected (nothing changed).
pub fn set(origin: String, access: SiteAccess) -> bool {
    if !shared::url::Origin::is_exact(&origin) {
        return false;
    }
    crate::conn::send_current(&ExtToBridge::SetSiteAccess { origin, access });
    crate::conn::status().connected
}
