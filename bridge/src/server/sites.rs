//! Site access in the running bridge (`shared::policy`, "Site access"):
//! the person's popup choices kept in memory and in
//! [`SiteRuleStore`](crate::site_rules::SiteRuleStore), the one check every
//! tool passes ([`AppState::check_site_use`]: navigation and reading as
//! [`SiteUse::Look`]; every page action is judged by
//! `shared::gate::before_resolve` / `before_dispatch` with the popup's
//! rules from [`AppState::popup_rules`], the same `site_refusal`), and the
//! extension's `SetSiteAccess` frames.
//!
//! A popup choice applies at once to every session: it changes the one
//! list every check reads, then the extension is told
//! (`BridgeToExt::SiteRules`) and the store is written (a failed write is
//! logged; the choice holds until the daemon stops).

use shared::error::WireError;
use shared::policy::{AccessIn, PopupRule, SiteAccess, SiteRules, SiteUse};
use shared::protocol::BridgeToExt;

use super::AppState;
use crate::config::ServeConfig;

/// The stored popup choices at start (none without a store, or when it
/// cannot be read: logged).
pub(super) fn load(config: &ServeConfig) -> Vec<PopupRule> {
    let Some(store) = &config.site_rules else { return Vec::new() };
    match store.list() {
        Ok(rows) => rows.into_iter().map(|r| r.rule).collect(),
        Err(e) => {
            tracing::error!(error = %e, "the popup's site rules could not be read");
            Vec::new()
        }
    }
}

impl AppState {
    /// Every access rule now: `config.toml`'s and the popup's.
    pub(crate) fn site_rules(&self) -> SiteRules {
        SiteRules { config: self.config().policy.sites.clone(), popup: self.popup_rules() }
    }

    /// The person's popup choices in force now.
    pub(crate) fn popup_rules(&self) -> Vec<PopupRule> {
        self.inner.popup_rules.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The access on `url`'s origin and the rule that set it.
    pub(crate) fn access_for(&self, url: &str) -> AccessIn {
        self.site_rules().access_for(url)
    }

    /// `PERMISSION_DENIED` naming the rule and the origin when `what` is
    /// refused on `url` (`shared::gate::site_refusal`, the check the
    /// action pipeline's pure decision makes too).
    pub(crate) fn check_site_use(&self, url: &str, what: SiteUse) -> Result<(), WireError> {
        let popup = self.popup_rules();
        shared::gate::site_refusal(&self.config().policy, &popup, url, what).map_or(Ok(()), Err)
    }

    /// `browser_status`'s line about the access of the current tab's site
    /// (as last seen), so the agent does not try what would be refused;
    /// and its JSON (`null` without a current tab or a known page).
    pub(crate) fn site_status(&self, current: Option<shared::protocol::TabId>) -> (String, serde_json::Value) {
        let Some(url) = current.and_then(|t| self.actions().page(t).url) else {
            return (String::new(), serde_json::Value::Null);
        };
        let Some(origin) = shared::url::Origin::of(&url).map(|o| o.to_string()) else {
            return (String::new(), serde_json::Value::Null);
        };
        let a = self.access_for(&url);
        let meaning = match a.access {
            SiteAccess::Act => "agents may act there (risky actions still follow the person's policy)",
            SiteAccess::Read => {
                "agents may navigate, read, scroll and hover there, but every click, typing, form, select, key \
                 press, upload or flow step is refused"
            }
            SiteAccess::Deny => "agents may not use it at all",
        };
        let from = match a.source {
            shared::policy::AccessSource::Default => "the default".to_string(),
            shared::policy::AccessSource::Config => format!("config.toml rule {}", a.rule),
            shared::policy::AccessSource::Popup => "the person's choice in the extension popup".to_string(),
        };
        let text =
            format!("Site access of the current tab ({origin}): {} — {meaning} (from {from})\n", a.access.label());
        let json = serde_json::json!({
            "origin": origin,
            "access": a.access.as_str(),
            "label": a.access.label(),
            "source": a.source.as_str(),
            "rule": a.rule,
        });
        (text, json)
    }

    /// Tells the extension every access rule (`BridgeToExt::SiteRules`).
    pub(crate) fn push_site_rules(&self) {
        self.hub().notify(BridgeToExt::SiteRules { rules: self.site_rules() });
    }

    /// The person chose `access` for `origin` in the popup or the approval
    /// window (`ExtToBridge::SetSiteAccess`): checked with
    /// `shared::policy::popup_choice`, in force at once for every session
    /// (before the next frame of the socket is read: an approval the
    /// person denied with "Never on this site" comes after it), told back
    /// to the extension either way, then stored.
    pub(crate) fn set_site_access(&self, origin: String, access: SiteAccess) {
        let stored = match shared::policy::popup_choice(&self.config().policy.sites, &origin, access) {
            Ok(stored) => stored,
            Err(why) => {
                tracing::warn!(origin = %origin, access = access.as_str(), reason = %why, "site access not changed");
                self.push_site_rules();
                return;
            }
        };
        {
            let mut rules = self.inner.popup_rules.lock().unwrap_or_else(|p| p.into_inner());
            rules.retain(|r| r.origin != origin);
            if let Some(a) = stored {
                rules.push(PopupRule { origin: origin.clone(), access: a });
            }
        }
        tracing::info!(origin = %origin, access = access.as_str(), "the person set a site's access in the popup");
        self.push_site_rules();
        let Some(store) = self.config().site_rules.clone() else { return };
        self.inner.tracker.spawn(async move {
            match tokio::task::spawn_blocking(move || store.set(&origin, stored)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(error = %e, "the site rule could not be stored"),
                Err(e) => tracing::error!(error = %e, "the site rule task failed"),
            }
        });
    }
}
