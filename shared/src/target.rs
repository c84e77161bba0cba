//! A flow step's element as the person would name it, and a *changed
//! target* (found only by a fallback locator, with another role or name):
//! what `crate::replay` decides and the approval window shows
//! (`crate::action::Gate::changed`). On their own so that `crate::action`
//! need not depend on replay; `crate::replay` re-exports both.

use serde::{Deserialize, Serialize};

/// An element as the person would name it: role and accessible name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSummary {
    pub role: String,
    pub name: String,
}

impl TargetSummary {
    /// `button "Place order"`.
    pub fn line(&self) -> String {
        let mut s = if self.role.is_empty() { "element".to_string() } else { self.role.clone() };
        s.push(' ');
        crate::snapshot::quote(&self.name, &mut s);
        s
    }
}

/// A step whose element was found only by a fallback locator and whose role
/// or name is not the recorded one: what the approval window shows side by
/// side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangedTarget {
    /// As recorded.
    pub recorded: TargetSummary,
    /// On the live page.
    pub live: TargetSummary,
    /// The locator that found it (`id "place"`).
    pub via: String,
}
