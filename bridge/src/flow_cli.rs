//! `chaperone flow …`: list, show, remove, export and import the person's
//! recorded flows (the store is [`crate::flows`]).
//!
//! Files are read whole up to [`MAX_FLOW_FILE_BYTES`]. `import` takes the
//! chaperone format (a serialized `shared::flow::Flow`) or a Chrome
//! DevTools Recorder `UserFlow`; every imported flow passes
//! `shared::record::check_flow` before anything is stored, so a bad file
//! stores nothing.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use shared::flow::{Flow, StepAction, Value};

use crate::error::Error;
use crate::flows::FlowStore;
use crate::home::{Home, HomeArg};

/// Largest flow file `import` reads.
pub const MAX_FLOW_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The file formats of `export` and `import`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FlowFormat {
    /// Chaperone's own JSON: the flow as stored.
    Chaperone,
    /// A Chrome DevTools Recorder `UserFlow` (`{title, steps}`).
    Recorder,
}

/// `chaperone flow …`.
#[derive(Debug, Subcommand)]
pub enum FlowCmd {
    /// List saved flows: name, created (UTC), steps and parameters.
    List {
        #[command(flatten)]
        home: HomeArg,
        /// Print JSON: an array of {name, created, steps, params}.
        #[arg(long)]
        json: bool,
    },
    /// Show a flow's steps and parameters.
    Show {
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        home: HomeArg,
        /// Print the flow as JSON (the chaperone format).
        #[arg(long)]
        json: bool,
    },
    /// Remove a flow. Exits 1 if there is no flow of that name.
    Rm {
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        home: HomeArg,
    },
    /// Write a flow to a file (or stdout). Parameters are written as
    /// placeholders; a secret parameter never has a value to write.
    Export {
        #[arg(value_name = "NAME")]
        name: String,
        #[arg(long, value_enum, default_value = "chaperone")]
        format: FlowFormat,
        /// Output file (default: stdout). Created 0600; an existing file is
        /// replaced.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        home: HomeArg,
    },
    /// Import a flow file (chaperone format or a Chrome DevTools Recorder
    /// JSON file, told apart by their shape). Nothing is stored unless the
    /// whole file is valid; an existing flow of the same name is kept
    /// (choose another with --name).
    Import {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Store the flow under this name instead of the file's.
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        #[command(flatten)]
        home: HomeArg,
    },
}

/// Runs `chaperone flow …`; bad files and names exit 2, a missing flow 1.
pub fn run(cmd: FlowCmd) -> Result<i32, Error> {
    let usage = |e: Error| match e {
        Error::FlowInvalid(_) | Error::FlowExists(_) => {
            eprintln!("error: {e}");
            Ok(2)
        }
        e => Err(e),
    };
    match cmd {
        FlowCmd::List { home, json } => {
            let rows = open(home)?.list()?;
            if json {
                println!("{}", to_json(&rows)?);
            } else if rows.is_empty() {
                println!("no flows");
            } else {
                let width = rows.iter().map(|r| r.name.chars().count()).max().unwrap_or(0);
                for r in rows {
                    println!("{:width$}  created {}  steps {}  params {}", r.name, r.created, r.steps, r.params);
                }
            }
            Ok(0)
        }
        FlowCmd::Show { name, home, json } => {
            let flow = open(home)?.get(&name)?.ok_or(Error::FlowNotFound(name))?;
            if json {
                println!("{}", to_json(&flow)?);
            } else {
                print!("{}", describe(&flow));
            }
            Ok(0)
        }
        FlowCmd::Rm { name, home } => {
            if open(home)?.delete(&name)? {
                println!("removed flow {name}");
                Ok(0)
            } else {
                Err(Error::FlowNotFound(name))
            }
        }
        FlowCmd::Export { name, format, output, home } => {
            let flow = open(home)?.get(&name)?.ok_or_else(|| Error::FlowNotFound(name.clone()))?;
            let text = match format {
                FlowFormat::Chaperone => to_json(&flow)?,
                FlowFormat::Recorder => to_json(&crate::recorder::export(&flow))?,
            };
            match output {
                Some(path) => {
                    crate::home::write_private(&path, format!("{text}\n").as_bytes())?;
                    eprintln!("wrote flow {name} to {}", path.display());
                }
                None => println!("{text}"),
            }
            Ok(0)
        }
        FlowCmd::Import { file, name, home } => {
            let flow = match read_flow_file(&file, name.as_deref()) {
                Ok(f) => f,
                Err(e) => return usage(e),
            };
            match open(home)?.save(&flow, false) {
                Ok(()) => {
                    println!("imported flow {} ({} steps, {} params)", flow.name, flow.steps.len(), flow.params.len());
                    Ok(0)
                }
                Err(e) => usage(e),
            }
        }
    }
}

fn open(home: HomeArg) -> Result<FlowStore, Error> {
    let home = Home::resolve(home.home)?;
    home.ensure()?;
    FlowStore::open(&home.db())
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String, Error> {
    Ok(serde_json::to_string_pretty(v)?)
}

/// Reads a flow file (either format), renamed to `name` when given, with
/// `created` set to now when the file has none. Checked, not stored.
pub fn read_flow_file(path: &Path, name: Option<&str>) -> Result<Flow, Error> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(MAX_FLOW_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > MAX_FLOW_FILE_BYTES {
        return Err(Error::FlowInvalid(format!("{} is over {MAX_FLOW_FILE_BYTES} bytes", path.display())));
    }
    let json: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::FlowInvalid(format!("{} is not JSON ({e})", path.display())))?;
    parse_flow_json(json, name)
}

/// A flow from a file's JSON: the chaperone format when it has `name`, a
/// Recorder `UserFlow` when it has `title`.
pub fn parse_flow_json(json: serde_json::Value, name: Option<&str>) -> Result<Flow, Error> {
    let mut flow = if json.get("title").is_some() && json.get("name").is_none() {
        crate::recorder::import(&json).map_err(|e| Error::FlowInvalid(e.to_string()))?
    } else {
        serde_json::from_value::<Flow>(json).map_err(|e| Error::FlowInvalid(format!("not a chaperone flow ({e})")))?
    };
    if let Some(name) = name {
        flow.name = name.to_string();
    }
    if flow.created.is_empty() {
        flow.created = crate::time::now_rfc3339();
    }
    shared::record::check_flow(&flow).map_err(|p| Error::FlowInvalid(p.to_string()))?;
    Ok(flow)
}

/// The text `flow show` prints: one line per step, then the parameters.
pub fn describe(flow: &Flow) -> String {
    use std::fmt::Write;
    let mut out = format!("flow {}  created {}\n", flow.name, flow.created);
    for (i, step) in flow.steps.iter().enumerate() {
        let value = |v: &Value| match v {
            Value::Literal(s) => format!("{s:?}"),
            Value::Param(p) => format!("{{{p}}}"),
        };
        let action = match &step.action {
            StepAction::Navigate { url } => format!("navigate {url}"),
            StepAction::Click => "click".to_string(),
            StepAction::Fill { value: v } => format!("fill {}", value(v)),
            StepAction::Select { value: v, .. } => format!("select {}", value(v)),
            StepAction::Check { checked } => format!("check {checked}"),
            StepAction::PressKey { key } => format!("press {key}"),
        };
        let target = step.target.as_ref().map_or(String::new(), |d| format!("  {} {:?}", d.role, d.name));
        let _ = writeln!(out, "{:>3}. {action}{target}  on {}", i + 1, step.url);
    }
    if !flow.params.is_empty() {
        out.push_str("params:\n");
        for p in &flow.params {
            let default = p.default.as_ref().map_or(String::new(), |d| format!(" (default {d:?})"));
            let _ = writeln!(out, "  {} {:?}{default}", p.name, p.kind);
        }
    }
    out
}
