//! The `chaperone` command line. `main.rs` parses and calls [`run`].

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use shared::protocol::{BridgeStatus, DaemonInfo};

use crate::daemon;
use crate::error::Error;
use crate::home::Home;
pub use crate::home::HomeArg;
use crate::launcher;
use crate::native_host::{self, BrowserFamily};

/// Chaperone: let an AI agent work in your real browser while you stay in
/// charge. The bridge holds policy, secrets and the audit log; agents talk
/// to it over MCP on loopback; the browser extension acts on pages.
#[derive(Debug, Parser)]
#[command(name = "chaperone", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Run the bridge daemon in the foreground (127.0.0.1 only).
    ///
    /// Creates the home (0700) and its tokens (0600) if absent, writes
    /// daemon.json {pid, port, startedAt, version}, and serves /ext (the
    /// extension) and /mcp (agents) until Ctrl-C or SIGTERM. Only one daemon
    /// runs per home.
    ///
    /// Logs go to stderr and to HOME/logs/chaperone-YYYY-MM-DD.log (one file
    /// per UTC day, appended; directory 0700, files 0600), also when `mcp`,
    /// `up` or the native host start the daemon. Typed values, page text,
    /// HTML, headers, cookies, bodies, tool arguments and results are left
    /// out; secrets in the rest are masked and long strings cut at 300
    /// characters. The log still shows which sites and tools were used: keep
    /// it private. If the log directory cannot be written, the daemon warns
    /// once and logs to stderr only. CHAPERONE_LOG sets the filter (default
    /// "info,rmcp=warn").
    Serve {
        #[command(flatten)]
        home: HomeArg,
        /// Port to listen on; 0 picks a free one (default: config.toml's
        /// server.port, else 0).
        #[arg(long, value_name = "N")]
        port: Option<u16>,
        /// Delete log files dated more than DAYS days before today, at start
        /// and then daily (1 to 3650; other files in HOME/logs are kept).
        #[arg(
            long,
            value_name = "DAYS",
            default_value_t = crate::logging::DEFAULT_LOG_RETENTION_DAYS,
            value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::logging::MAX_RETENTION_DAYS))
        )]
        log_retention_days: u32,
        /// Log to stderr only: write no log file (existing ones are left as
        /// they are).
        #[arg(long)]
        no_log_file: bool,
        /// Let `browser_network_request {reveal: true}` show captured
        /// requests unredacted (credentials included); each reveal is
        /// audited. Off by default: every network output is redacted.
        #[arg(long)]
        allow_reveal: bool,
        /// Write no goal traces (HOME/knowledge/traces.jsonl) for
        /// browser_run_goal.
        #[arg(long)]
        no_traces: bool,
    },
    /// Start the daemon if needed, launch Chromium with the extension on an
    /// owned profile, and stay in the foreground until Ctrl-C.
    ///
    /// The profile lives in HOME/profiles/NAME and is never your everyday
    /// browser profile. No remote-debugging port is opened. Log in to sites
    /// by hand in that window; the agent then works with those sessions.
    Up {
        #[command(flatten)]
        home: HomeArg,
        /// Owned profile name (1 to 32 of a-z, 0-9, '-'). A profile in use
        /// by a running browser is refused (PROFILE_LOCKED).
        #[arg(long, default_value = "default", value_name = "NAME")]
        profile: String,
        /// Run the browser headless (the default when there is no display).
        #[arg(long)]
        headless: bool,
        /// Browser executable (default: chromium or google-chrome on PATH).
        /// Firefox (e.g. /usr/bin/firefox-esr) is recognised by its name and
        /// gets an owned Firefox profile with the add-on of dist/firefox.
        #[arg(long, value_name = "PATH")]
        browser: Option<PathBuf>,
        /// Page to open first (http or https).
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// The unpacked extension (default: $CHAPERONE_EXTENSION_DIR, else
        /// dist/extension of this checkout).
        #[arg(long, value_name = "DIR")]
        extension_dir: Option<PathBuf>,
        /// Load the bodies build (dist/extension-bodies, with the `debugger`
        /// permission): the agent's tabs' text response bodies and WebSocket
        /// messages are captured too; Chrome shows its debugging banner.
        #[arg(long)]
        network_bodies: bool,
        /// Seconds to wait for the extension to connect.
        #[arg(long, default_value_t = 30, value_name = "SECS")]
        connect_timeout: u64,
        /// Port for the daemon if `up` starts it (0 = any free port).
        #[arg(long, value_name = "N")]
        port: Option<u16>,
    },
    /// Serve MCP on stdin/stdout, forwarding to the daemon (started if
    /// needed). Configure agents that launch a command with: chaperone mcp
    Mcp {
        #[command(flatten)]
        home: HomeArg,
    },
    /// Show the daemon, the connected browser, the agent's tabs, and any
    /// second browser that was refused while one was connected.
    Status {
        #[command(flatten)]
        home: HomeArg,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List the audit log: every action and decision, masked, newest last.
    Audit {
        #[command(flatten)]
        home: HomeArg,
        /// Only rows since this long ago (30m, 12h, 7d) or this date
        /// (YYYY-MM-DD, UTC).
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Print JSON (an array of rows) for export.
        #[arg(long)]
        json: bool,
    },
    /// Open the read-only review dashboard: every agent, what it did,
    /// what you approved and denied, secrets by name only.
    ///
    /// Starts the daemon if needed. The address is
    /// http://127.0.0.1:PORT/dashboard/#t=TOKEN: the dashboard token
    /// (HOME/dashboard-token) travels in the fragment, which is never sent
    /// to a server; the page keeps it for the tab and removes it from the
    /// address bar. Nothing in the dashboard changes anything: approvals
    /// stay in the extension.
    Dashboard {
        #[command(flatten)]
        home: HomeArg,
        /// Print the address (first line of stdout) instead of opening a
        /// browser.
        #[arg(long)]
        print: bool,
    },
    /// Write one session's review as one self-contained HTML file (no
    /// script, loads nothing, opens offline), to keep or to send.
    ///
    /// It holds what the dashboard shows for that session and nothing
    /// more: actions, pages without query strings, decisions, secrets by
    /// name only. Sessions are named as in the dashboard (mcp:0b5c2f9e).
    Report {
        #[command(flatten)]
        home: HomeArg,
        /// The session to report (e.g. mcp:0b5c2f9e).
        #[arg(long, value_name = "ID", conflicts_with = "last", required_unless_present = "last")]
        session: Option<String>,
        /// Report the session of the newest audit row.
        #[arg(long)]
        last: bool,
        /// Where to write the file (mode 0600; replaced if it exists).
        #[arg(short = 'o', long = "output", value_name = "FILE.html")]
        output: PathBuf,
    },
    /// Write the native-messaging host manifest that lets the extension
    /// find the daemon, pinned to Chaperone's extension id.
    InstallNativeHost {
        #[command(flatten)]
        home: HomeArg,
        /// Install into this browser user-data-dir (its NativeMessagingHosts/
        /// folder) instead of the user-level default.
        #[arg(long, value_name = "DIR")]
        user_data_dir: Option<PathBuf>,
        /// Which browser's user-level folder to use without --user-data-dir.
        #[arg(long, value_enum, default_value = "chromium")]
        browser: BrowserFamily,
    },
    /// Store, list and remove secrets: values the agent can type into a
    /// page by name without ever seeing them.
    ///
    /// Values are encrypted (AES-256-GCM, the secret's name and sites bound
    /// to its ciphertext) in HOME/chaperone.db under a random key in
    /// HOME/secret.key (0600). No command prints a stored value. Back up
    /// secret.key with the database: without it the values are lost.
    ///
    /// Bind each secret to the sites it belongs to (`set NAME --site
    /// ORIGIN`): it is then typed only on pages of those origins, and
    /// refused everywhere else, even under YOLO or a site rule that allows
    /// everything. A secret bound to no site is typed only after you
    /// approve it in the extension's window, every time, YOLO or not.
    ///
    /// Secrets stored before site bindings existed are bound to no site:
    /// they ask every time until you set them again with --site (e.g.
    /// `chaperone secret set NAME --site https://app.example`; setting a
    /// name again replaces its value and its sites).
    Secret {
        #[command(subcommand)]
        command: SecretCmd,
    },
    /// Create, list, remove and open owned browser profiles
    /// (HOME/profiles/NAME).
    ///
    /// Use one profile per identity (one person's set of accounts), log in
    /// by hand with `profile open NAME`, and never point Chaperone at your
    /// everyday browser profile. Names are 1 to 32 of a-z, 0-9 and '-'.
    /// Chaperone never reads, copies or exports a profile's cookies,
    /// storage or saved passwords.
    Profile {
        #[command(subcommand)]
        command: ProfileCmd,
    },
    /// List, show, remove, export and import the flows you recorded with
    /// the extension's "Record me" switch (stored in HOME/chaperone.db).
    ///
    /// Values typed into sensitive fields (passwords, tokens, card numbers)
    /// are never part of a flow: such a step takes a secret's name when the
    /// flow runs. Export writes parameters as placeholders.
    Flow {
        #[command(subcommand)]
        command: crate::flow_cli::FlowCmd,
    },
    /// Learn an HTTP API from captured traffic (a HAR) and write an OpenAPI
    /// 3.1 description, or a Python/TypeScript client from one. No network,
    /// no browser; credentials in the capture are never written.
    Api {
        #[command(subcommand)]
        command: crate::api_cli::ApiCmd,
    },
    /// List the site access rules: `access = "read"` / `"deny"` in
    /// config.toml's [[sites]] and the choices made in the extension's
    /// popup ("Read only", "Never"; stored in HOME/chaperone.db). Read
    /// only: popup choices are changed only in the popup, config rules in
    /// config.toml. The most restrictive matching rule wins.
    Sites {
        #[command(flatten)]
        home: HomeArg,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `chaperone profile …`.
#[derive(Debug, Subcommand)]
pub enum ProfileCmd {
    /// Create HOME/profiles/NAME (0700) and print how to use it.
    Create {
        /// The profile's name: 1 to 32 of a-z 0-9 -
        #[arg(value_name = "NAME", value_parser = crate::profiles::parse_name)]
        name: String,
        #[command(flatten)]
        home: HomeArg,
    },
    /// List profiles: name, size on disk, last used (newest modification
    /// inside) and whether a browser has it open.
    List {
        #[command(flatten)]
        home: HomeArg,
        /// Print JSON: an array of {name, path, sizeBytes, lastUsed, inUse,
        /// holder}.
        #[arg(long)]
        json: bool,
    },
    /// Remove a profile and everything in it, without asking. Refused
    /// while a browser has it open.
    Rm {
        /// The profile's name.
        #[arg(value_name = "NAME", value_parser = crate::profiles::parse_name)]
        name: String,
        #[command(flatten)]
        home: HomeArg,
    },
    /// Open the browser on a profile, with no extension and no automation,
    /// for you to log in to sites (and finish MFA); close the window when
    /// done. Creates the profile if needed. Refused while a browser has it
    /// open.
    Open {
        /// The profile's name.
        #[arg(value_name = "NAME", value_parser = crate::profiles::parse_name)]
        name: String,
        #[command(flatten)]
        home: HomeArg,
        /// Browser executable (default: chromium or google-chrome on PATH).
        #[arg(long, value_name = "PATH")]
        browser: Option<PathBuf>,
    },
}

/// `chaperone secret …`.
#[derive(Debug, Subcommand)]
pub enum SecretCmd {
    /// Store a secret, replacing the value and the sites of any secret of
    /// the same name (its creation time is kept).
    ///
    /// When stdin is a terminal the value is asked for with typing hidden;
    /// otherwise it is all of stdin less one trailing newline ("\n" or
    /// "\r\n"), e.g. `printf %s "$TOKEN" | chaperone secret set api_token
    /// --site https://reports.example`. Empty values and values over 10000
    /// characters are refused. The first `set` creates HOME/secret.key.
    /// Prints the name and sites, never the value.
    ///
    /// Without --site the secret is bound to no site: the extension asks
    /// you before every use, even with YOLO on. Setting a name again
    /// without --site unbinds it.
    Set {
        /// The secret's name: 1 to 64 of A-Z a-z 0-9 _ . -
        #[arg(value_name = "NAME", value_parser = parse_secret_name)]
        name: String,
        /// An origin the secret may be typed on, as in config.toml's
        /// `[[sites]]`: `scheme://host[:port]`, host may start with `*.`
        /// (subdomains), port may be `*` (any), e.g. `https://app.example`
        /// or `http://127.0.0.1:*`. Repeat for several sites. On any other
        /// origin the secret is refused (PERMISSION_DENIED) before anything
        /// reaches the page, whatever the policy or YOLO say.
        #[arg(long = "site", value_name = "ORIGIN", value_parser = parse_site)]
        sites: Vec<String>,
        #[command(flatten)]
        home: HomeArg,
    },
    /// List stored secrets: names, the sites each is bound to, and
    /// created/updated times (UTC), sorted by name. Never values.
    List {
        #[command(flatten)]
        home: HomeArg,
        /// Print JSON: an array of {name, sites, created, updated}.
        #[arg(long)]
        json: bool,
    },
    /// Remove a stored secret. Exits 1 if there is no secret of that name.
    Rm {
        /// The secret's name.
        #[arg(value_name = "NAME", value_parser = parse_secret_name)]
        name: String,
        #[command(flatten)]
        home: HomeArg,
    },
}

/// Rejects a bad secret name at parse time (exit 2, nothing touched).
fn parse_secret_name(s: &str) -> Result<String, String> {
    if crate::secrets::valid_name(s) { Ok(s.to_string()) } else { Err(crate::secrets::NAME_RULE.to_string()) }
}

/// Rejects a bad `--site` pattern at parse time (exit 2, nothing touched),
/// with the `[[sites]]` rules of `config.toml`.
fn parse_site(s: &str) -> Result<String, String> {
    shared::policy::check_origin_pattern(s).map(|()| s.to_string())
}

/// Runs a parsed command. Returns the process exit code.
pub async fn run(cli: Cli) -> Result<i32, Error> {
    match cli.command {
        Cmd::Serve { home, port, log_retention_days, no_log_file, allow_reveal, no_traces } => {
            let home = Home::resolve(home.home)?;
            crate::model::set_traces_off(no_traces);
            let log_file = (!no_log_file).then_some(log_retention_days);
            daemon::serve_logging(&home, port, log_file, allow_reveal, shutdown_signal()).await?;
            Ok(0)
        }
        Cmd::Up { home, profile, headless, browser, url, extension_dir, network_bodies, connect_timeout, port } => {
            let home = Home::resolve(home.home)?;
            up(UpArgs { home, profile, headless, browser, url, extension_dir, network_bodies, connect_timeout, port })
                .await
        }
        Cmd::Mcp { home } => {
            let home = Home::resolve(home.home)?;
            let info = tokio::task::block_in_place(|| daemon::ensure_running(&home))?;
            let token = home.tokens()?.mcp.expose().to_string();
            let discover: crate::proxy::Discover = std::sync::Arc::new(move || {
                let info = daemon::ensure_running(&home)?;
                Ok((info.port, home.tokens()?.mcp.expose().to_string()))
            });
            crate::proxy::run(info.port, token, discover).await?;
            Ok(0)
        }
        Cmd::Status { home, json } => status(&Home::resolve(home.home)?, json).await,
        Cmd::Audit { home, since, json } => audit(&Home::resolve(home.home)?, since.as_deref(), json),
        Cmd::Dashboard { home, print } => {
            let home = Home::resolve(home.home)?;
            tokio::task::block_in_place(|| crate::dashboard_cli::dashboard(&home, print))
        }
        Cmd::Report { home, session, last, output } => {
            crate::dashboard_cli::report(&Home::resolve(home.home)?, session, last, &output)
        }
        Cmd::InstallNativeHost { home, user_data_dir, browser } => {
            let home = Home::resolve(home.home)?;
            home.ensure()?;
            let dir = match user_data_dir {
                Some(_) if browser == BrowserFamily::Firefox => {
                    return Err(Error::Usage(
                        "--user-data-dir is a Chromium folder; Firefox reads only ~/.mozilla/native-messaging-hosts \
                         (leave --user-data-dir out)"
                            .into(),
                    ));
                }
                Some(udd) => udd.join("NativeMessagingHosts"),
                None => native_host::default_hosts_dir(browser)?,
            };
            let path = native_host::install_for(&dir, &home, browser)?;
            println!("wrote {}", path.display());
            let id = if browser == BrowserFamily::Firefox { shared::FIREFOX_ADDON_ID } else { shared::EXTENSION_ID };
            println!("the extension {id} can now find the bridge of {}", home.root().display());
            Ok(0)
        }
        Cmd::Secret { command } => secret(command).await,
        Cmd::Profile { command } => profile(command),
        Cmd::Flow { command } => crate::flow_cli::run(command),
        Cmd::Api { command } => crate::api_cli::run(command),
        Cmd::Sites { home, json } => sites(&Home::resolve(home.home)?, json),
    }
}

/// `chaperone sites`: config.toml's access rules and the popup's, read only.
fn sites(home: &Home, json: bool) -> Result<i32, Error> {
    let file = crate::config::FileConfig::load(&home.config_toml())?;
    let policy = file.policy().map_err(|message| Error::ConfigFile { path: home.config_toml(), message })?;
    let popup = crate::site_rules::read_only_list(&home.db())?;
    print!("{}", crate::site_rules::render(&policy.sites, &popup, json));
    Ok(0)
}

/// `chaperone profile …`. Bad names are refused by clap (exit 2); a
/// profile in use, a missing one or a symlink are errors (exit 1).
fn profile(cmd: ProfileCmd) -> Result<i32, Error> {
    use crate::profiles;
    match cmd {
        ProfileCmd::Create { name, home } => {
            let home = Home::resolve(home.home)?;
            let created = profiles::create(&home, &name)?;
            let dir = home.profile(&name);
            if created {
                println!("created profile {name} at {}", dir.display());
            } else {
                println!("profile {name} already exists at {}", dir.display());
            }
            println!();
            println!("{}", profiles::GUIDANCE.replace("NAME", &name));
            Ok(0)
        }
        ProfileCmd::List { home, json } => {
            let rows = profiles::list(&Home::resolve(home.home)?)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else if rows.is_empty() {
                println!("no profiles (create one with `chaperone profile create NAME`)");
            } else {
                let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
                for r in rows {
                    let used = match &r.holder {
                        Some(h) => format!("in use by {h}"),
                        None => "not in use".to_string(),
                    };
                    println!(
                        "{:width$}  {:>10}  last used {}  {used}",
                        r.name,
                        human_size(r.size_bytes),
                        r.last_used.as_deref().unwrap_or("never"),
                    );
                }
            }
            Ok(0)
        }
        ProfileCmd::Rm { name, home } => {
            profiles::remove(&Home::resolve(home.home)?, &name)?;
            println!("removed profile {name}");
            Ok(0)
        }
        ProfileCmd::Open { name, home, browser } => {
            let home = Home::resolve(home.home)?;
            let browser = launcher::find_browser(browser.as_deref())?;
            profiles::ensure_not_in_use(&home, &name).map_err(|e| match e {
                Error::ProfileLocked { name, holder } => Error::ProfileInUse { name, holder },
                e => e,
            })?;
            profiles::create(&home, &name)?;
            if !launcher::has_display() {
                println!(
                    "warning: no display found (DISPLAY/WAYLAND_DISPLAY); the browser may not be able to open a window"
                );
            }
            let log = profiles::browser_log(&home, &name);
            let mut child = if crate::firefox::is_firefox(&browser) {
                crate::firefox::launch_for_login(&browser, &home.profile(&name), &log)?
            } else {
                launcher::launch_for_login(&browser, &home.profile(&name), &log)?
            };
            println!("opened profile {name} (no extension, no automation): log in to your sites, finish any MFA,");
            println!("then close the browser window. Browser output: {}", log.display());
            let status = tokio::task::block_in_place(|| child.wait()).map_err(|e| Error::io(&browser, e))?;
            println!("the browser exited ({status}); profile {name} is ready for `chaperone up --profile {name}`");
            Ok(0)
        }
    }
}

/// Bytes as B, KiB, MiB or GiB, one decimal.
fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

/// `chaperone secret …`. Bad input (name, empty or over-long value) exits
/// 2 like a usage error; store failures and an unknown name on `rm` are
/// errors (exit 1).
async fn secret(cmd: SecretCmd) -> Result<i32, Error> {
    use std::io::IsTerminal;

    use crate::secrets::SecretStore;

    let usage = |e: Error| match e {
        Error::SecretName(_) | Error::SecretValue(_) | Error::SecretSite(_) => {
            eprintln!("error: {e}");
            Ok(2)
        }
        e => Err(e),
    };
    match cmd {
        SecretCmd::Set { name, sites, home } => {
            let home = Home::resolve(home.home)?;
            let sites = match crate::secrets::normalize_sites(&sites) {
                Ok(s) => s,
                Err(e) => return usage(e),
            };
            let value = if std::io::stdin().is_terminal() {
                match crate::secrets::prompt_value(&name).await {
                    Ok(Some(v)) => v,
                    Ok(None) => {
                        eprintln!("cancelled: nothing stored");
                        return Ok(130);
                    }
                    Err(e) => return usage(e),
                }
            } else {
                match tokio::task::block_in_place(|| crate::secrets::read_value(&mut std::io::stdin().lock())) {
                    Ok(v) => v,
                    Err(e) => return usage(e),
                }
            };
            match SecretStore::open(&home).and_then(|s| s.set(&name, value, &sites)) {
                Ok(()) => {
                    if sites.is_empty() {
                        println!("stored secret {name} (bound to no site: you approve every use)");
                    } else {
                        println!("stored secret {name} for {}", sites.join(", "));
                    }
                    Ok(0)
                }
                Err(e) => usage(e),
            }
        }
        SecretCmd::List { home, json } => {
            let rows = SecretStore::open(&Home::resolve(home.home)?)?.list()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else if rows.is_empty() {
                println!("no secrets");
            } else {
                let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
                for r in rows {
                    let sites =
                        if r.sites.is_empty() { "no site (asks every time)".to_string() } else { r.sites.join(" ") };
                    println!("{:width$}  created {}  updated {}  sites {sites}", r.name, r.created, r.updated);
                }
            }
            Ok(0)
        }
        SecretCmd::Rm { name, home } => {
            if SecretStore::open(&Home::resolve(home.home)?)?.remove(&name)? {
                println!("removed secret {name}");
                Ok(0)
            } else {
                Err(Error::SecretNotFound(name))
            }
        }
    }
}

fn audit(home: &Home, since: Option<&str>, json: bool) -> Result<i32, Error> {
    let since = since.map(parse_since).transpose()?;
    if !home.db().exists() {
        if json {
            println!("[]");
        } else {
            println!("no audit log yet ({} does not exist)", home.db().display());
        }
        return Ok(0);
    }
    let rows = crate::audit::AuditStore::open(&home.db())?.list(since)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(0);
    }
    if rows.is_empty() {
        println!("no audit rows");
    }
    for r in rows {
        let decided = r.decided_by.map_or("-", shared::audit::DecidedBy::as_str);
        println!(
            "{} #{} {} {} tab={} risk={} decision={} by={} outcome={} url={}",
            r.time,
            r.id,
            r.tool,
            r.summary,
            r.tab.map_or("-".to_string(), |t| t.to_string()),
            r.risk.map_or("-", |r| r.as_str()),
            r.decision.map_or("-", |d| d.as_str()),
            decided,
            r.outcome.as_deref().unwrap_or("-"),
            r.url.as_deref().unwrap_or("-"),
        );
        if !r.reasons.is_empty() {
            println!("    reasons: {}", r.reasons.join("; "));
        }
    }
    Ok(0)
}

/// `30m`, `12h`, `7d`, `45s` ago, or a `YYYY-MM-DD` date (UTC), as Unix seconds.
fn parse_since(s: &str) -> Result<i64, Error> {
    let bad = || Error::Usage(format!("--since {s:?}: use 30m, 12h, 7d or YYYY-MM-DD"));
    let now = crate::time::unix_now() as i64;
    if let Some((num, unit)) = s.len().checked_sub(1).map(|i| s.split_at(i))
        && let Ok(n) = num.parse::<i64>()
    {
        let secs = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            _ => return Err(bad()),
        };
        return n.checked_mul(secs).filter(|v| *v >= 0).map(|v| now - v).ok_or_else(bad);
    }
    crate::time::parse_date(s).map(|day| day * crate::time::SECS_PER_DAY as i64).ok_or_else(bad)
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM. The handlers are installed
/// when this is called, not when the future is first polled, so a signal
/// that arrives while the daemon is still starting is not lost.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

/// Asks the daemon for its status over HTTP (mcp token).
pub async fn fetch_status(info: &DaemonInfo, token: &str) -> Result<BridgeStatus, Error> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(|e| Error::Server(e.to_string()))?;
    let resp = client
        .get(format!("http://127.0.0.1:{}/status", info.port))
        .bearer_auth(token)
        .send()
        .await
        .map_err(|_| Error::DaemonUnreachable { pid: info.pid, port: info.port })?;
    if !resp.status().is_success() {
        return Err(Error::Server(format!("the daemon answered HTTP {}", resp.status().as_u16())));
    }
    resp.json().await.map_err(|_| Error::Server("the daemon sent an unreadable status".into()))
}

async fn status(home: &Home, json: bool) -> Result<i32, Error> {
    let Some(info) = home.running_daemon() else {
        if json {
            println!("{}", serde_json::json!({"running": false, "home": home.root()}));
        } else {
            println!("daemon: not running (home {})", home.root().display());
            println!("start it with `chaperone up` or `chaperone serve`");
        }
        return Ok(3);
    };
    let token = home.tokens()?.mcp.expose().to_string();
    let st = fetch_status(&info, &token).await?;
    if json {
        let v = serde_json::json!({"running": true, "home": home.root(), "daemon": info, "status": st});
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(0);
    }
    println!(
        "daemon: running, pid {}, http://127.0.0.1:{}/mcp, version {}, since {}",
        info.pid, info.port, info.version, info.started_at
    );
    if st.browsers.is_empty() {
        println!("browsers: none connected");
    }
    for b in &st.browsers {
        println!(
            "browser #{}: extension {} connected for {} s; agent tabs: {}",
            b.connection,
            b.extension_version,
            b.connected_secs,
            if b.agent_tabs.is_empty() {
                "none".to_string()
            } else {
                b.agent_tabs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            }
        );
    }
    if st.refused.total > 0 {
        println!(
            "WARNING: {} second browser connection(s) refused while a browser was connected; something on this \
             computer holds the extension token. If you did not start another Chaperone browser, stop the daemon \
             and check this machine.",
            st.refused.total
        );
        for r in &st.refused.recent {
            println!(
                "  refused at {} (claimed extension version {:?})",
                crate::time::rfc3339(r.at_ms / 1000),
                r.extension_version
            );
        }
    }
    Ok(0)
}

struct UpArgs {
    home: Home,
    profile: String,
    headless: bool,
    browser: Option<PathBuf>,
    url: Option<String>,
    extension_dir: Option<PathBuf>,
    network_bodies: bool,
    connect_timeout: u64,
    port: Option<u16>,
}

async fn up(a: UpArgs) -> Result<i32, Error> {
    // Ctrl-C from here on shuts everything down cleanly.
    let stop = shutdown_signal();
    tokio::pin!(stop);
    // Check everything that can be checked before starting anything.
    let url = a
        .url
        .as_deref()
        .map(shared::url::validate_navigation_url)
        .transpose()
        .map_err(|e| Error::Usage(format!("--url: {}", e.message)))?;
    let browser = launcher::find_browser(a.browser.as_deref())?;
    let extension_dir = launcher::find_extension_flavour(a.extension_dir.as_deref(), a.network_bodies)?;
    launcher::validate_profile_name(&a.profile)?;
    // A profile a running browser holds: fail before starting anything.
    crate::profiles::ensure_not_in_use(&a.home, &a.profile)?;
    a.home.ensure()?;

    // The daemon: reuse a running one, or serve in this process.
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut own_daemon = None;
    let info = match a.home.running_daemon() {
        Some(info) => {
            println!("using the running daemon (pid {}, port {})", info.pid, info.port);
            info
        }
        None => {
            let home = a.home.clone();
            let c = cancel.clone();
            own_daemon =
                Some(tokio::spawn(
                    async move { daemon::serve(&home, a.port, async move { c.cancelled().await }).await },
                ));
            wait_for_own_daemon(&a.home, own_daemon.as_mut()).await?
        }
    };
    let token = a.home.tokens()?.mcp.expose().to_string();
    let before = fetch_status(&info, &token)
        .await
        .map(|s| s.browsers.iter().map(|b| b.connection).max().unwrap_or(0))
        .unwrap_or(0);

    let profile_dir = launcher::prepare_profile(&a.home, &a.profile)?;
    let headless = a.headless || !launcher::has_display();
    if headless && !a.headless {
        println!("no display found: starting the browser headless");
    }
    let log = crate::profiles::browser_log(&a.home, &a.profile);
    let launch = launcher::Launch {
        browser: &browser,
        profile_dir: &profile_dir,
        extension_dir: &extension_dir,
        headless,
        url: url.as_deref(),
    };
    let mut child = if crate::firefox::is_firefox(&browser) {
        crate::firefox::launch(&a.home, &launch, &log)?
    } else {
        launcher::launch(&launch, &log)?
    };
    let native_log = a.home.logs().join("native-host.log");
    let native_before = std::fs::metadata(&native_log).map(|m| m.len()).unwrap_or(0);

    // Wait for the extension.
    let deadline = Instant::now() + Duration::from_secs(a.connect_timeout);
    let connected = loop {
        if let Ok(Some(code)) = child.try_wait() {
            stop_own_daemon(&cancel, own_daemon).await;
            return Err(Error::BrowserStart(format!(
                "the browser exited before the extension connected ({code}); its last output:\n{}",
                launcher::tail(&log, 15)
            )));
        }
        if let Ok(st) = fetch_status(&info, &token).await
            && st.browsers.iter().any(|b| b.connection > before)
        {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        tokio::select! {
            () = &mut stop => {
                println!("stopping…");
                stop_browser(&mut child);
                stop_own_daemon(&cancel, own_daemon).await;
                return Ok(130);
            }
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    };
    if !connected {
        let asked = std::fs::metadata(&native_log).map(|m| m.len()).unwrap_or(0) > native_before;
        let why = if asked {
            format!(
                "the extension asked the native host for the bridge but did not connect to port {}; see {}",
                info.port,
                native_log.display()
            )
        } else {
            format!(
                "the extension never asked for the bridge: check that {} is a built Chaperone extension (cargo xtask build) and that this browser allows --load-extension; browser output is in {}",
                extension_dir.display(),
                log.display()
            )
        };
        stop_browser(&mut child);
        stop_own_daemon(&cancel, own_daemon).await;
        return Err(Error::BrowserStart(format!(
            "the extension did not connect within {} s: {why}",
            a.connect_timeout
        )));
    }

    println!("Chaperone is up: the browser (profile {}) is connected to the bridge.", a.profile);
    println!();
    // The absolute path: after `cargo xtask up` the binary is not on the PATH.
    let bin = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .unwrap_or_else(|_| std::path::PathBuf::from("chaperone"));
    let home_abs = std::fs::canonicalize(a.home.root()).unwrap_or_else(|_| a.home.root().to_path_buf());
    println!("{}", crate::connect::agent_hint(&bin, &home_abs, info.port));
    println!("Press Ctrl-C to stop.");

    let browser_exit = async {
        loop {
            if let Ok(Some(code)) = child.try_wait() {
                return code;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    };
    let code = tokio::select! {
        () = &mut stop => {
            println!("stopping…");
            stop_browser(&mut child);
            0
        }
        code = browser_exit => {
            println!("the browser exited ({code}); stopping");
            0
        }
    };
    stop_own_daemon(&cancel, own_daemon).await;
    Ok(code)
}

async fn wait_for_own_daemon(
    home: &Home,
    task: Option<&mut tokio::task::JoinHandle<Result<(), Error>>>,
) -> Result<DaemonInfo, Error> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let Some(task) = task else { return Err(Error::Server("no daemon task".into())) };
    loop {
        if let Some(info) = home.running_daemon().filter(|i| i.pid == std::process::id()) {
            return Ok(info);
        }
        if task.is_finished() {
            return match task.await {
                Ok(Err(e)) => Err(e),
                _ => Err(Error::DaemonStart("the daemon stopped at start".into())),
            };
        }
        if Instant::now() > deadline {
            return Err(Error::DaemonStart("the daemon did not start within 10 s".into()));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn stop_own_daemon(
    cancel: &tokio_util::sync::CancellationToken,
    task: Option<tokio::task::JoinHandle<Result<(), Error>>>,
) {
    cancel.cancel();
    if let Some(t) = task {
        let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
    }
}

/// SIGTERM, then SIGKILL after 5 s.
fn stop_browser(child: &mut std::process::Child) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    #[test]
    fn since_accepts_durations_and_dates() {
        assert_eq!(super::parse_since("2000-03-01").unwrap(), 951_868_800);
        assert_eq!(super::parse_since("1970-01-01").unwrap(), 0);
        let now = crate::time::unix_now() as i64;
        assert!((super::parse_since("2h").unwrap() - (now - 7200)).abs() <= 2);
        for bad in ["", "h", "2w", "-3d", "2026-13-01", "2026-02-30", "yesterday"] {
            assert!(super::parse_since(bad).is_err(), "{bad}");
        }
    }
}
