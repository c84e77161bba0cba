//! `cargo xtask bench`: measurements through the real stack (daemon +
//! headless Chromium with the extension + an MCP client over HTTP).
//!
//! Layout, so more suites can be added (e.g. the click round trip of issue
//! 4): [`Bench`] starts the stack once and serves the generated pages of
//! [`pages`]; each suite is a module with `pub async fn run(&mut Bench) ->
//! Result<Suite>` that measures with [`client::BenchMcp`] (timed
//! `tools/call`), returns its rows and checks against targets
//! ([`report`]), and is listed in `SUITES` in `src/bin/bench.rs`. Results
//! go to stdout as a table and to `target/bench/<suite>.json`.

pub mod click;
pub mod client;
pub mod dashboard;
pub mod files;
pub mod firefox;
pub mod flows;
pub mod forge;
pub mod machine;
pub mod model;
pub mod network;
pub mod pages;
pub mod playwright;
pub mod profile;
pub mod report;
pub mod sessions;
pub mod snapshot;
pub mod stats;
pub mod trace;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tests::{Browser, BrowserOptions, Daemon, FixtureServer};

use client::BenchMcp;

/// How much to measure.
#[derive(Debug, Clone)]
pub struct Config {
    pub warmup: usize,
    pub runs: usize,
    /// Fresh page loads for the first-snapshot (cold) figure.
    pub cold_loads: usize,
    /// Skip the CDP profile of the largest page.
    pub no_profile: bool,
    /// Measure Playwright MCP on the same pages (`snapshot` suite).
    pub playwright: bool,
    /// Record a Chrome trace of the whole `sessions` run (every process).
    pub trace: bool,
    /// Start the real model server and give the daemon a `[model]`
    /// section (the `model` suite runs).
    pub model: bool,
    /// Only the first N intents of the `model` suite.
    pub model_intents: Option<usize>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            warmup: 3,
            runs: 20,
            cold_loads: 5,
            no_profile: false,
            playwright: true,
            trace: false,
            model: false,
            model_intents: None,
        }
    }
}

/// The running stack and the generated site.
pub struct Bench {
    pub mcp: BenchMcp,
    pub browser: Browser,
    pub daemon: Daemon,
    pub server: FixtureServer,
    /// The copy of the extension Chromium loaded (a concurrent `cargo xtask
    /// build` cannot change it under the benchmark).
    pub extension_dir: PathBuf,
    pub config: Config,
    /// `(warm-up, runs)` when the current page was found too slow for the
    /// configured counts.
    pub adapted: Option<(usize, usize)>,
    /// `up/` (the allowed upload folder) and `dl/` (the download folder).
    pub files_dir: PathBuf,
    /// The real model server behind a recording proxy (`config.model`).
    pub model: Option<model::ModelRig>,
    _files: tempfile::TempDir,
    _site: tempfile::TempDir,
    _extension: tempfile::TempDir,
}

impl Bench {
    pub async fn start(config: Config) -> Result<Bench> {
        let site = tests::temp_dir("bench-site");
        pages::write_all(site.path()).context("writing the generated pages")?;
        let server = FixtureServer::serve(site.path().to_path_buf());

        let extension = tests::temp_dir("bench-ext");
        let extension_dir = extension.path().join("extension");
        copy_dir(&tests::extension_dir(), &extension_dir).context("copying the extension")?;

        let files = tests::temp_dir("bench-files");
        std::fs::create_dir_all(files.path().join("up"))?;
        let mut daemon_config = format!(
            "[uploads]\nallowed_dirs = [{:?}]\n[downloads]\nenabled = true\ndir = {:?}\n",
            files.path().join("up").display().to_string(),
            files.path().join("dl").display().to_string()
        );
        let model =
            if config.model { Some(model::ModelRig::start().await.context("the real model server")?) } else { None };
        if let Some(rig) = &model {
            daemon_config.push_str(&rig.config_section());
        }
        let daemon = Daemon::start_with_config(Some(&daemon_config)).await?;
        let browser = Browser::launch(BrowserOptions {
            extension: Some(extension_dir.clone()),
            native_host_home: Some(daemon.home().to_path_buf()),
            extra_args: Vec::new(),
            headed: false,
        })
        .await?;
        tests::wait_for_extension(&daemon).await;
        let mcp = BenchMcp::connect(daemon.port(), &daemon.mcp_token).await?;
        Ok(Bench {
            mcp,
            browser,
            daemon,
            server,
            extension_dir,
            config,
            adapted: None,
            files_dir: files.path().to_path_buf(),
            model,
            _files: files,
            _site: site,
            _extension: extension,
        })
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

/// Milliseconds for display.
pub fn fmt_ms(ms: f64) -> String {
    report::fmt_num(ms)
}
