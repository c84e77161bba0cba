//! Chrome's id of a tab, on its own so that every module that names a tab
//! can do so without the wire frames of `crate::protocol` (which names
//! them all).

/// Chrome's id of a tab.
pub type TabId = i64;
