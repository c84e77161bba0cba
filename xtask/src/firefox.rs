//! `dist/firefox/`: the same extension for Firefox (ARCHITECTURE.md,
//! "Firefox").
//!
//! Every file of `dist/extension/` is copied unchanged (the same WASM, the
//! same JS loaders); only `manifest.json` differs: `manifest/firefox.json`,
//! an event page (`background.scripts`) instead of a service worker, the
//! fixed add-on id, and no permission Firefox lacks. The build checks that
//! the add-on id is `shared::FIREFOX_ADDON_ID` and that no Chromium-only
//! key or permission slipped in.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// Keys of the Chromium manifest that mean nothing (or something else) to
/// Firefox.
const CHROMIUM_ONLY_KEYS: &[&str] = &["key", "minimum_chrome_version", "message_serialization"];
/// Permissions Firefox does not have.
const CHROMIUM_ONLY_PERMISSIONS: &[&str] = &["debugger", "offscreen", "contentSettings", "sidePanel"];

/// Copies `dist/extension` to `dist/firefox` with the Firefox manifest.
pub fn build(root: &Path) -> Result<()> {
    let manifest = check_manifest(root)?;
    let from = root.join("dist/extension");
    let to = root.join("dist/firefox");
    if to.exists() {
        fs::remove_dir_all(&to).with_context(|| format!("removing {}", to.display()))?;
    }
    copy_tree(&from, &to)?;
    fs::write(to.join("manifest.json"), manifest)?;
    eprintln!("xtask: built {} (Firefox manifest, same WASM and loaders)", to.display());
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        } else if kind.is_file() {
            fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// Reads `manifest/firefox.json` and checks it against the rules above.
fn check_manifest(root: &Path) -> Result<String> {
    let path = root.join("manifest/firefox.json");
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text).context("manifest/firefox.json is not JSON")?;
    let id = json
        .pointer("/browser_specific_settings/gecko/id")
        .and_then(|v| v.as_str())
        .context("manifest/firefox.json has no browser_specific_settings.gecko.id")?;
    let want = shared_const(root, "FIREFOX_ADDON_ID")?;
    if id != want {
        bail!("manifest/firefox.json gecko.id is {id}, but shared::FIREFOX_ADDON_ID is {want}");
    }
    if json.pointer("/background/service_worker").is_some() || json.pointer("/background/scripts").is_none() {
        bail!("manifest/firefox.json: Firefox runs the worker as an event page (background.scripts)");
    }
    for key in CHROMIUM_ONLY_KEYS {
        if json.get(key).is_some() {
            bail!("manifest/firefox.json has the Chromium-only key {key:?}");
        }
    }
    let perms =
        json.get("permissions").and_then(|p| p.as_array()).context("manifest/firefox.json has no permissions")?;
    for p in perms {
        if let Some(p) = p.as_str()
            && CHROMIUM_ONLY_PERMISSIONS.contains(&p)
        {
            bail!("manifest/firefox.json asks for {p:?}, which Firefox does not have");
        }
    }
    Ok(text)
}

/// A `pub const NAME: &str = "…";` of `shared/src/lib.rs`, read from the
/// source so xtask need not depend on `shared`.
fn shared_const(root: &Path, name: &str) -> Result<String> {
    let src = fs::read_to_string(root.join("shared/src/lib.rs"))?;
    let prefix = format!("pub const {name}: &str = \"");
    src.lines()
        .find_map(|l| l.trim().strip_prefix(prefix.as_str()))
        .map(|v| v.trim_end_matches("\";").to_string())
        .with_context(|| format!("shared/src/lib.rs has no {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_firefox_manifest_passes_its_checks() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let text = check_manifest(root).unwrap();
        assert!(!text.contains("\"debugger\""));
    }
}
