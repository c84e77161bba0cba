//! Forge: learns an HTTP API from captured traffic and writes it out.
//!
//! A HAR (Chaperone's own export, or one saved from a browser's DevTools,
//! which holds credentials) goes in; an OpenAPI 3.1 description comes out
//! ([`learn`]), and from that description a Python or TypeScript client
//! ([`client::generate`]). The crate does no network IO, starts no browser
//! and runs no program: the bridge reads and writes the files.
//!
//! The steps, each a module with its own rules and table tests:
//! - [`har`]: reading the HAR, leniently (browsers add fields).
//! - [`keep`]: which entries are the API (JSON answers and JSON/form
//!   writes on the hosts asked for), not the page, static files, beacons
//!   or analytics.
//! - [`segment`]: what a path segment or a string value looks like
//!   (integer, UUID, hex or base62 id, date, slug, word; formats).
//! - [`template`]: path templates from how segments vary across samples.
//! - [`schema`]: JSON Schemas merged across every sample.
//! - [`credentials`]: every credential seen in the input (and the person's
//!   own secrets), so none reaches an example, an enum or a client.
//! - [`security`]: bearer tokens, cookie sessions, API-key and CSRF headers
//!   described as `securitySchemes`, never with a value.
//! - [`naming`]: operationIds and parameter names.
//! - [`openapi`]: the assembled document; [`yaml`] writes it as YAML.
//! - [`client`]: the generated clients and their tests.
//! - [`measure`]: precision and recall against an API's documentation.
//! - [`capture`]: Chaperone's own (redacted) capture as input, and
//!   [`exports`]: file names in the exports folder (the MCP tools).

pub mod capture;
pub mod client;
pub mod credentials;
pub mod error;
pub mod exports;
pub mod har;
pub mod keep;
pub mod measure;
pub mod naming;
pub mod openapi;
pub mod schema;
pub mod security;
pub mod segment;
pub mod template;
pub mod yaml;

pub use error::Error;
pub use openapi::{LearnOptions, Learned, learn};

#[cfg(test)]
mod leaks;
#[cfg(test)]
mod tests;
