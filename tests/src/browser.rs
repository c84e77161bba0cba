//! Headless Chromium for the tests: a fresh user-data-dir, the unpacked
//! extension, the native-messaging host for a daemon's home, and a CDP
//! connection (the tests' eyes and hands; the product never uses CDP).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::cdp::{Cdp, TargetInfo};

/// What to launch.
#[derive(Debug, Clone, Default)]
pub struct BrowserOptions {
    /// Unpacked extension to load (`--load-extension`).
    pub extension: Option<PathBuf>,
    /// Run `chaperone install-native-host --home <this>` for the fresh profile.
    pub native_host_home: Option<PathBuf>,
    /// Extra command-line arguments (before the start URL).
    pub extra_args: Vec<String>,
}

/// A running headless Chromium; killed (and its profile removed) on drop.
pub struct Browser {
    child: Option<Child>,
    pub cdp: Cdp,
    /// DevTools port.
    pub port: u16,
    user_data_dir: tempfile::TempDir,
    logs: tempfile::TempDir,
}

impl Browser {
    /// Chromium with the extension from [`crate::extension_dir`] and the
    /// native host pointing at `home` (the daemon's home).
    pub async fn with_extension(home: &Path) -> Result<Browser> {
        Browser::launch(BrowserOptions {
            extension: Some(crate::extension_dir()),
            native_host_home: Some(home.to_path_buf()),
            extra_args: Vec::new(),
        })
        .await
    }

    /// A plain Chromium (no extension): for testing the harness itself.
    pub async fn plain() -> Result<Browser> {
        Browser::launch(BrowserOptions::default()).await
    }

    /// The arguments every test browser gets (without profile and extension).
    pub fn base_args() -> Vec<String> {
        let mut args: Vec<String> = vec!["--headless=new".into()];
        if crate::running_as_root() {
            args.push("--no-sandbox".into());
        }
        args.extend(
            [
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-quic",
                "--disable-features=DisableLoadExtensionCommandLineSwitch",
                "--password-store=basic",
            ]
            .map(String::from),
        );
        args
    }

    pub async fn launch(opts: BrowserOptions) -> Result<Browser> {
        let user_data_dir = crate::temp_dir("udd");
        let logs = crate::temp_dir("browser-logs");
        let udd = user_data_dir.path();

        if let Some(home) = &opts.native_host_home {
            let out = Command::new(crate::chaperone_bin())
                .arg("install-native-host")
                .arg("--user-data-dir")
                .arg(udd)
                .arg("--home")
                .arg(home)
                .output()
                .context("run chaperone install-native-host")?;
            if !out.status.success() {
                bail!(
                    "chaperone install-native-host failed ({}): {}{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }

        let mut args = Browser::base_args();
        if let Some(ext) = &opts.extension {
            args.push(format!("--load-extension={}", ext.display()));
        }
        args.push(format!("--user-data-dir={}", udd.display()));
        args.push("--remote-debugging-port=0".into());
        args.extend(opts.extra_args.iter().cloned());
        args.push("about:blank".into());

        let stderr = File::create(logs.path().join("chromium.stderr"))?;
        let stdout = File::create(logs.path().join("chromium.stdout"))?;
        let mut child = Command::new(crate::browser_path())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .context("spawn Chromium")?;

        // Chromium writes "<port>\n<browser ws path>" once DevTools listens.
        let port_file = udd.join("DevToolsActivePort");
        let mut found = None;
        for _ in 0..400 {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next())
                    && let Ok(port) = port.trim().parse::<u16>()
                {
                    found = Some((port, path.trim().to_string()));
                    break;
                }
            }
            if let Ok(Some(status)) = child.try_wait() {
                bail!("Chromium exited early ({status}): {}", crate::tail(&logs.path().join("chromium.stderr"), 30));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let Some((port, path)) = found else {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "Chromium wrote no DevToolsActivePort within 20 s: {}",
                crate::tail(&logs.path().join("chromium.stderr"), 30)
            );
        };
        let cdp = Cdp::connect(&format!("ws://127.0.0.1:{port}{path}")).await?;
        Ok(Browser { child: Some(child), cdp, port, user_data_dir, logs })
    }

    pub fn user_data_dir(&self) -> &Path {
        self.user_data_dir.path()
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The last lines Chromium wrote to stderr.
    pub fn stderr_tail(&self, lines: usize) -> String {
        crate::tail(&self.logs.path().join("chromium.stderr"), lines)
    }

    /// The extension's service-worker target, once it is running.
    pub async fn extension_worker(&self, within: Duration) -> Result<TargetInfo> {
        let prefix = format!("chrome-extension://{}/", shared::EXTENSION_ID);
        self.cdp.wait_for_target(within, |t| t.kind == "service_worker" && t.url.starts_with(&prefix)).await
    }

    /// Page targets (tabs) as Chromium lists them.
    pub async fn pages(&self) -> Result<Vec<TargetInfo>> {
        Ok(self.cdp.targets().await?.into_iter().filter(|t| t.kind == "page").collect())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            crate::send_signal(child.id(), "TERM");
            for _ in 0..60 {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
