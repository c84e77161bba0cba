//! Firefox for the tests: a fresh profile in Firefox's format with the
//! unpacked add-on of `dist/firefox` (a proxy file), the native-messaging
//! host for a daemon's home (in the browser's own `HOME`, where Firefox
//! reads it, as `chaperone up` does), and a WebDriver BiDi connection (the
//! tests' eyes and hands; the product never opens the port). Headless, or
//! headed on its own Xvfb screen where windows matter (the approval
//! window).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use crate::bidi::{Bidi, Context};

/// `CHAPERONE_TEST_FIREFOX`, else `firefox-esr` (or `firefox`) on the PATH.
pub fn firefox_path() -> PathBuf {
    if let Some(p) = std::env::var_os("CHAPERONE_TEST_FIREFOX").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    for name in ["firefox-esr", "firefox"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!("no Firefox: install firefox-esr (cargo xtask test does) or set CHAPERONE_TEST_FIREFOX")
}

/// `dist/firefox`, next to [`crate::extension_dir`].
pub fn firefox_extension_dir() -> PathBuf {
    let chromium = crate::extension_dir();
    let p = chromium.parent().map(|d| d.join("firefox")).unwrap_or_default();
    assert!(p.join("manifest.json").is_file(), "no built Firefox add-on at {} (run `cargo xtask build`)", p.display());
    std::fs::canonicalize(&p).unwrap_or(p)
}

/// The extension's own page `path` in Firefox (`moz-extension://UUID/path`).
pub fn extension_url(path: &str) -> String {
    format!("{}/{path}", shared::firefox_extension_origin())
}

/// The prefs a test profile gets: those `chaperone up` writes (the add-on's
/// fixed host, unsigned add-ons, no first run), and no update checks.
fn user_js() -> String {
    let uuids = serde_json::json!({ shared::FIREFOX_ADDON_ID: shared::FIREFOX_EXTENSION_UUID }).to_string();
    let mut prefs: Vec<(String, String)> = [
        ("xpinstall.signatures.required", "false"),
        ("extensions.autoDisableScopes", "0"),
        ("extensions.enabledScopes", "5"),
        ("extensions.update.enabled", "false"),
        // As `chaperone up` sets it (bridge/src/firefox.rs): the event page
        // is not suspended while the add-on's socket is open.
        ("extensions.background.idle.timeout", "300000"),
        ("browser.shell.checkDefaultBrowser", "false"),
        ("browser.startup.homepage_override.mstone", "\"ignore\""),
        ("browser.aboutwelcome.enabled", "false"),
        ("datareporting.policy.dataSubmissionEnabled", "false"),
        ("toolkit.telemetry.reportingpolicy.firstRun", "false"),
        ("app.normandy.enabled", "false"),
        ("browser.tabs.warnOnClose", "false"),
        // Downloads land in the profile's folder without a dialog.
        ("browser.download.useDownloadDir", "true"),
        ("browser.download.folderList", "2"),
        // The add-on's console (its event page is privileged) in firefox.stdout.
        ("devtools.console.stdout.chrome", "true"),
        ("devtools.console.stdout.content", "true"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    prefs.push(("extensions.webextensions.uuids".into(), serde_json::Value::String(uuids).to_string()));
    prefs.iter().map(|(k, v)| format!("user_pref({k:?}, {v});\n")).collect()
}

/// A running Firefox with the add-on; killed (and its profile removed) on drop.
pub struct Firefox {
    child: Option<Child>,
    pub bidi: Bidi,
    /// The BiDi port (tests only).
    pub port: u16,
    profile: tempfile::TempDir,
    home: tempfile::TempDir,
    logs: tempfile::TempDir,
    xvfb: Option<Child>,
    /// The Xvfb display of a headed Firefox.
    display: Option<String>,
}

impl Firefox {
    /// Firefox with the add-on and the native host for `home` (the daemon's
    /// home), headed on Xvfb or headless.
    pub async fn with_extension(chaperone_home: &Path, headed: bool) -> Result<Firefox> {
        let profile = crate::temp_dir("ff-profile");
        let home = crate::temp_dir("ff-home");
        let logs = crate::temp_dir("ff-logs");
        let p = profile.path();
        std::fs::write(p.join("user.js"), user_js())?;
        std::fs::create_dir_all(p.join("extensions"))?;
        std::fs::write(
            p.join("extensions").join(shared::FIREFOX_ADDON_ID),
            format!("{}\n", firefox_extension_dir().display()),
        )?;
        let downloads = p.join("Downloads");
        std::fs::create_dir_all(&downloads)?;
        let mut js = std::fs::read_to_string(p.join("user.js"))?;
        js.push_str(&format!("user_pref(\"browser.download.dir\", {:?});\n", downloads.display().to_string()));
        std::fs::write(p.join("user.js"), js)?;

        let out = Command::new(crate::chaperone_bin())
            .args(["install-native-host", "--browser", "firefox", "--home"])
            .arg(chaperone_home)
            .env("HOME", home.path())
            .output()
            .context("run chaperone install-native-host --browser firefox")?;
        if !out.status.success() {
            bail!(
                "chaperone install-native-host --browser firefox failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }

        let (xvfb, display) = if headed {
            let (child, display) = crate::browser::start_xvfb(logs.path())?;
            (Some(child), Some(display))
        } else {
            (None, None)
        };
        let mut args: Vec<String> =
            vec!["-profile".into(), p.display().to_string(), "-no-remote".into(), "--remote-debugging-port=0".into()];
        if !headed {
            args.push("--headless".into());
        }
        args.push("about:blank".into());
        let stderr = File::create(logs.path().join("firefox.stderr"))?;
        let stdout = File::create(logs.path().join("firefox.stdout"))?;
        let mut command = Command::new(firefox_path());
        command.env("HOME", home.path()).env_remove("MOZ_HEADLESS");
        match &display {
            Some(d) => {
                command.env("DISPLAY", d);
            }
            None => {
                command.env_remove("DISPLAY");
            }
        }
        let mut child =
            command.args(&args).stdin(Stdio::null()).stdout(stdout).stderr(stderr).spawn().context("spawn Firefox")?;

        // Firefox writes {"ws_host", "ws_port"} once BiDi listens.
        let port_file = p.join("WebDriverBiDiServer.json");
        let mut port = None;
        for _ in 0..600 {
            if let Ok(text) = std::fs::read_to_string(&port_file)
                && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
                && let Some(n) = v["ws_port"].as_u64()
            {
                port = u16::try_from(n).ok();
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                bail!("Firefox exited early ({status}): {}", crate::tail(&logs.path().join("firefox.stderr"), 30));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let Some(port) = port else {
            let _ = child.kill();
            let _ = child.wait();
            bail!("Firefox opened no BiDi port within 30 s: {}", crate::tail(&logs.path().join("firefox.stderr"), 30));
        };
        let bidi = Bidi::connect(port).await?;
        Ok(Firefox { child: Some(child), bidi, port, profile, home, logs, xvfb, display })
    }

    pub fn profile_dir(&self) -> &Path {
        self.profile.path()
    }

    /// The `HOME` Firefox runs with (its native-messaging folder).
    pub fn home_dir(&self) -> &Path {
        self.home.path()
    }

    pub fn downloads_dir(&self) -> PathBuf {
        self.profile.path().join("Downloads")
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The last lines Firefox wrote to stderr.
    pub fn stderr_tail(&self, lines: usize) -> String {
        crate::tail(&self.logs.path().join("firefox.stderr"), lines)
    }

    /// The last lines Firefox wrote to stdout (the add-on's console).
    pub fn stdout_tail(&self, lines: usize) -> String {
        crate::tail(&self.logs.path().join("firefox.stdout"), lines)
    }

    /// Browsing contexts whose URL starts with `prefix`.
    pub async fn contexts_at(&self, prefix: &str) -> Result<Vec<Context>> {
        Ok(self.bidi.contexts().await?.into_iter().filter(|c| c.url.starts_with(prefix)).collect())
    }

    /// The person at this Firefox's keyboard (headed only).
    pub fn human(&self) -> Option<FirefoxHuman> {
        self.display.clone().map(|display| FirefoxHuman { display })
    }

    /// The tab showing `url_prefix`, waiting up to `within`.
    pub async fn tab(&self, url_prefix: &str, within: Duration) -> Result<Context> {
        self.bidi.wait_for_context(within, |u| u.starts_with(url_prefix)).await
    }
}

impl Drop for Firefox {
    fn drop(&mut self) {
        for mut child in [self.child.take(), self.xvfb.take()].into_iter().flatten() {
            crate::send_signal(child.id(), "TERM");
            let mut gone = false;
            for _ in 0..100 {
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

/// The person at Firefox, at the keyboard of its Xvfb screen: keys typed
/// through the X server (xdotool's XTEST), so Firefox receives them as
/// real, trusted input, in the approval window (a Firefox popup window
/// showing the add-on's `approval.html`), which WebDriver BiDi does not
/// reach (Mozilla bug 1755014). The window focuses the first request's
/// Approve button; Enter approves that request, Escape denies it
/// (extension/worker/src/approval.rs).
pub struct FirefoxHuman {
    display: String,
}

/// The approval window's title (`extension/static/approval.html`, which
/// Firefox shows as "Extension: (Chaperone) - Chaperone — approve? —
/// Mozilla Firefox"), as an xdotool name pattern.
const APPROVAL_TITLE: &str = "Chaperone .* approve";

impl FirefoxHuman {
    /// The X display the person looks at (for `xwd -root -display …`).
    pub fn display(&self) -> &str {
        &self.display
    }

    fn xdotool(&self, args: &[&str]) -> Result<String> {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .context("run xdotool (install it: `apt-get install xdotool`, or run `cargo xtask test`)")?;
        if !out.status.success() {
            bail!("xdotool {args:?} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The X windows showing the approval window now.
    pub fn approval_windows(&self) -> Vec<String> {
        // xdotool exits 1 when nothing matches.
        self.xdotool(&["search", "--onlyvisible", "--name", APPROVAL_TITLE])
            .map(|out| out.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// Waits up to `within` until no approval window is open (the last
    /// one closes once its request is answered), so that the next one
    /// found is the next request's.
    pub async fn approval_windows_closed(&self, within: Duration) {
        let closed = crate::poll(within, Duration::from_millis(100), || async {
            self.approval_windows().is_empty().then_some(())
        })
        .await;
        assert!(closed.is_some(), "an approval window stayed open for {within:?}");
    }

    /// Waits up to `within` for the approval window.
    pub async fn approval_window(&self, within: Duration) -> Result<String> {
        crate::poll(within, Duration::from_millis(100), || async { self.approval_windows().into_iter().next() })
            .await
            .with_context(|| format!("no approval window within {within:?}"))
    }

    /// The visible X windows whose title `pred` accepts, newest last.
    pub fn windows_titled(&self, pred: impl Fn(&str) -> bool) -> Vec<String> {
        let ids = self.xdotool(&["search", "--onlyvisible", "--name", "."]).unwrap_or_default();
        let mut ids: Vec<u64> = ids
            .lines()
            .filter(|id| self.xdotool(&["getwindowname", id]).is_ok_and(|t| pred(&t)))
            .filter_map(|id| id.parse().ok())
            .collect();
        ids.sort_unstable();
        ids.into_iter().map(|id| id.to_string()).collect()
    }

    /// The first window whose title `pred` accepts, looked for during up to
    /// 5 s: a window closing at that moment (the popup's, after Ctrl+W)
    /// makes one `xdotool search` fail, and a new one has no title yet.
    pub async fn window_titled(&self, pred: impl Fn(&str) -> bool) -> Option<String> {
        crate::poll(Duration::from_secs(5), Duration::from_millis(100), || async {
            self.windows_titled(&pred).into_iter().next()
        })
        .await
    }

    /// Opens `url` the way a person does in a new window: Ctrl+N, the
    /// address typed, Enter. (WebDriver BiDi cannot load the add-on's
    /// pages; a person can.)
    pub fn open_in_new_window(&self, from_window: &str, url: &str) -> Result<()> {
        self.click_and_press(from_window, (600, 400), &["ctrl+n"])?;
        std::thread::sleep(Duration::from_millis(1500));
        self.xdotool(&["key", "--clearmodifiers", "ctrl+l"])?;
        self.xdotool(&["type", "--delay", "5", url])?;
        self.xdotool(&["key", "--clearmodifiers", "Return"])?;
        Ok(())
    }

    /// The person opens the add-on's popup page in a window of its own
    /// (from the first browser window) and waits until it is drawn: its
    /// keyboard then sits where the popup puts it (Done on the first tab
    /// waiting for the person, else the Record me switch while recording,
    /// else STOP; `extension/worker/src/popup.rs`). Returns the window.
    pub async fn open_popup(&self) -> Result<String> {
        let from = self
            .window_titled(|t| t.ends_with("Mozilla Firefox") && !t.contains("Chaperone"))
            .await
            .context("no browser window to open the popup from")?;
        let before = self.popup_windows();
        self.open_in_new_window(&from, &extension_url("popup.html"))?;
        let popup = crate::poll(Duration::from_secs(15), Duration::from_millis(200), || async {
            self.popup_windows().into_iter().find(|w| !before.contains(w))
        })
        .await
        .context("the popup's window did not open")?;
        // Its state comes from the worker: give it a moment to draw.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        Ok(popup)
    }

    fn popup_windows(&self) -> Vec<String> {
        self.windows_titled(|t| t.contains("Chaperone") && !t.contains("approve"))
    }

    /// Presses `keys` in order in `window` (given the keyboard first),
    /// wherever its focus is.
    pub fn keys(&self, window: &str, keys: &[&str]) -> Result<()> {
        self.xdotool(&["windowfocus", "--sync", window])?;
        for key in keys {
            self.xdotool(&["key", "--clearmodifiers", key])?;
        }
        Ok(())
    }

    /// Types `text` into whatever has the keyboard in `window`.
    pub fn type_text(&self, window: &str, text: &str) -> Result<()> {
        self.xdotool(&["windowfocus", "--sync", window])?;
        self.xdotool(&["type", "--delay", "5", text])?;
        Ok(())
    }

    /// Clicks at `(x, y)` in `window` (somewhere that does nothing, to give
    /// it the keyboard) and presses `keys` in order.
    pub fn click_and_press(&self, window: &str, (x, y): (u32, u32), keys: &[&str]) -> Result<()> {
        self.xdotool(&["mousemove", "--window", window, &x.to_string(), &y.to_string(), "click", "1"])?;
        for key in keys {
            self.xdotool(&["key", "--clearmodifiers", key])?;
        }
        Ok(())
    }

    /// Clicks the approval window's heading (which does nothing but give
    /// the window the keyboard: the screen has no window manager to do
    /// that) and presses `key` (`Return`, `Escape`).
    pub fn press(&self, window: &str, key: &str) -> Result<()> {
        self.click_and_press(window, (40, 30), &[key])
    }

    /// Like [`FirefoxHuman::answering`], with the presses starting only
    /// once `first` (say, a change to the page while the person decides)
    /// is done.
    pub async fn answering_after<P, F>(&self, first: P, key: &str, call: F) -> (F::Output, usize)
    where
        P: std::future::Future<Output = ()>,
        F: std::future::Future,
    {
        let mut call = std::pin::pin!(call);
        tokio::select! {
            r = &mut call => return (r, 0),
            () = first => {}
        }
        self.answering(key, call).await
    }

    /// Runs `call` while pressing `key` in the approval window until it
    /// returns: the window opens, then renders its request and focuses
    /// it; a key before that decides nothing, so the person presses again
    /// every half second, as a person would. Returns the call's output and
    /// how many presses it took.
    pub async fn answering<F: std::future::Future>(&self, key: &str, call: F) -> (F::Output, usize) {
        self.pressing(|| self.approval_windows().into_iter().next().is_some_and(|w| self.press(&w, key).is_ok()), call)
            .await
    }

    /// Runs `call` while doing `press` (one press of the person's; `true`
    /// when it was made) every half second until `call` returns: a window
    /// still drawing its state decides nothing on a key, so the person
    /// presses again. Returns the call's output and the presses made.
    pub async fn pressing<F: std::future::Future>(&self, press: impl Fn() -> bool, call: F) -> (F::Output, usize) {
        let mut call = std::pin::pin!(call);
        let mut presses = 0;
        loop {
            tokio::select! {
                r = &mut call => return (r, presses),
                _ = tokio::time::sleep(Duration::from_millis(500)) => {
                    if press() {
                        presses += 1;
                    }
                }
            }
        }
    }
}
