//! The crate's one error type. Messages name files and rules, never a value
//! that could be a credential.

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input is not a HAR this crate can read.
    #[error("not a HAR file: {0}")]
    BadHar(String),
    /// Nothing in the input looked like an API call for the hosts asked for.
    #[error("no API calls found{0}")]
    NoApi(String),
    /// The spec given to the client generator is not one it can read.
    #[error("not an OpenAPI description this generator reads: {0}")]
    BadSpec(String),
    /// A credential would have been written (the file or place is named, the
    /// value never is).
    #[error("GENERATION_FAILED: {0} would contain a credential; nothing was written")]
    CredentialInOutput(String),
}
