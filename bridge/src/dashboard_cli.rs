//! `chaperone dashboard` and `chaperone report`: the person's review of
//! what agents did (the routes and the reads are in
//! `server/dashboard/`).

use std::path::Path;

use crate::error::Error;
use crate::home::Home;
use crate::server::dashboard::report::{self, Which};

/// `chaperone dashboard [--print]`: starts the daemon if needed; prints
/// the address (token in its fragment) as the first line of stdout, or
/// hands it to the desktop's browser opener.
pub fn dashboard(home: &Home, print: bool) -> Result<i32, Error> {
    let info = crate::daemon::ensure_running(home)?;
    let token = home.tokens()?.dashboard;
    let url = shared::dashboard::dashboard_url(info.port, token.expose());
    if print {
        println!("{url}");
        println!("(the address holds the dashboard token after '#': anyone who has it can read the audit log)");
        return Ok(0);
    }
    match std::process::Command::new("xdg-open")
        .arg(&url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
    {
        Ok(s) if s.success() => {
            println!("opened the dashboard in your browser (read-only; it updates as agents work)");
            Ok(0)
        }
        _ => {
            eprintln!("could not open a browser (xdg-open); open this address yourself:");
            println!("{url}");
            Ok(0)
        }
    }
}

/// `chaperone report [--session ID | --last] -o FILE.html`.
pub fn report(home: &Home, session: Option<String>, last: bool, output: &Path) -> Result<i32, Error> {
    let which = match (session, last) {
        (Some(s), false) => Which::Session(s),
        (None, true) => Which::Last,
        _ => return Err(Error::Usage("say which session: --session ID or --last".into())),
    };
    let html = report::render_from(&home.db(), &which)?;
    crate::home::write_private(output, html.as_bytes())?;
    println!("wrote {} ({} bytes; one self-contained file: no script, loads nothing)", output.display(), html.len());
    Ok(0)
}
