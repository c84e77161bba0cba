//! Chromium for the tests: a fresh user-data-dir, the unpacked extension,
//! the native-messaging host for a daemon's home, and a CDP connection (the
//! tests' eyes and hands; the product never uses CDP). Headless, or headed
//! on its own Xvfb screen (1600×1000) where real windows matter (where the
//! approval window opens beside the page).

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
    /// A real (headed) browser on its own Xvfb screen instead of headless.
    pub headed: bool,
}

/// Whether the browsers in which the tests play the person run headed on
/// Xvfb (the default: real windows, as the person has them) or headless
/// (`CHAPERONE_HEADLESS=1`, for machines without Xvfb).
pub fn person_is_played_headed() -> bool {
    std::env::var_os("CHAPERONE_HEADLESS").is_none_or(|v| v.is_empty() || v == "0")
}

/// The screen a headed test browser gets.
pub const XVFB_SCREEN: (u32, u32) = (1600, 1000);

/// A running headless Chromium; killed (and its profile removed) on drop.
pub struct Browser {
    child: Option<Child>,
    pub cdp: Cdp,
    /// DevTools port.
    pub port: u16,
    user_data_dir: tempfile::TempDir,
    logs: tempfile::TempDir,
    /// The X server of a headed browser; stopped after the browser.
    xvfb: Option<Child>,
}

impl Browser {
    /// Chromium with the extension from [`crate::extension_dir`] and the
    /// native host pointing at `home` (the daemon's home).
    pub async fn with_extension(home: &Path) -> Result<Browser> {
        Browser::extension_browser(home, person_is_played_headed()).await
    }

    /// Like [`Browser::with_extension`], always headless: for comparisons
    /// where nobody plays the person (a challenge page is refused at once
    /// instead of waiting for someone to solve it).
    pub async fn headless_with_extension(home: &Path) -> Result<Browser> {
        Browser::extension_browser(home, false).await
    }

    /// Chromium with the extension and the native host for `home`, headed
    /// on Xvfb or headless.
    pub async fn extension_browser(home: &Path, headed: bool) -> Result<Browser> {
        Browser::extension_browser_at(home, headed, crate::extension_dir()).await
    }

    /// Like [`Browser::extension_browser`] with the unpacked extension at
    /// `extension` (the bodies build, say).
    pub async fn extension_browser_at(home: &Path, headed: bool, extension: std::path::PathBuf) -> Result<Browser> {
        Browser::launch(BrowserOptions {
            extension: Some(extension),
            native_host_home: Some(home.to_path_buf()),
            extra_args: Vec::new(),
            headed,
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

        // Chromium's own download folder is the profile's `Downloads`, never
        // the user's: a test sees exactly what the browser wrote.
        std::fs::create_dir_all(udd.join("Default"))?;
        std::fs::create_dir_all(udd.join("Downloads"))?;
        let prefs = serde_json::json!({
            "download": { "default_directory": udd.join("Downloads"), "prompt_for_download": false, "directory_upgrade": true },
            "savefile": { "default_directory": udd.join("Downloads") },
        });
        std::fs::write(udd.join("Default").join("Preferences"), prefs.to_string())?;

        let mut args = Browser::base_args();
        let (xvfb, display) = if opts.headed {
            let (child, display) = start_xvfb(logs.path())?;
            args.retain(|a| a != "--headless=new");
            (Some(child), Some(display))
        } else {
            (None, None)
        };
        if let Some(ext) = &opts.extension {
            args.push(format!("--load-extension={}", ext.display()));
        }
        args.push(format!("--user-data-dir={}", udd.display()));
        args.push("--remote-debugging-port=0".into());
        args.extend(opts.extra_args.iter().cloned());
        args.push("about:blank".into());

        let stderr = File::create(logs.path().join("chromium.stderr"))?;
        let stdout = File::create(logs.path().join("chromium.stdout"))?;
        let mut command = Command::new(crate::browser_path());
        if let Some(display) = &display {
            command.env("DISPLAY", display);
        }
        let mut child =
            command.args(&args).stdin(Stdio::null()).stdout(stdout).stderr(stderr).spawn().context("spawn Chromium")?;

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
        Ok(Browser { child: Some(child), cdp, port, user_data_dir, logs, xvfb })
    }

    /// Where Chromium itself saves downloads (the profile's `Downloads`).
    pub fn downloads_dir(&self) -> std::path::PathBuf {
        self.user_data_dir.path().join("Downloads")
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
        for mut child in [self.child.take(), self.xvfb.take()].into_iter().flatten() {
            crate::send_signal(child.id(), "TERM");
            let mut gone = false;
            for _ in 0..60 {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    gone = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if !gone {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// Starts an X server on a free display (`-displayfd`: it names the display
/// once it is ready) with one [`XVFB_SCREEN`] screen.
pub(crate) fn start_xvfb(logs: &Path) -> Result<(Child, String)> {
    use std::io::Read;
    let (w, h) = XVFB_SCREEN;
    let mut child = Command::new("Xvfb")
        .args(["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", &format!("{w}x{h}x24")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(File::create(logs.join("xvfb.stderr"))?)
        .spawn()
        .context("start Xvfb for a headed browser (install it: `apt-get install xvfb`, or run `cargo xtask test`)")?;
    let mut out = child.stdout.take().context("Xvfb stdout")?;
    let mut number = String::new();
    let mut byte = [0u8; 1];
    while out.read(&mut byte).map(|n| n == 1).unwrap_or(false) && byte[0] != b'\n' {
        number.push(byte[0] as char);
    }
    let number = number.trim();
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
        let _ = child.kill();
        bail!("Xvfb did not name its display: {}", crate::tail(&logs.join("xvfb.stderr"), 10));
    }
    Ok((child, format!(":{number}")))
}
