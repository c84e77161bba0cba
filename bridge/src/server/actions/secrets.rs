//! An agent's value, checked before anything is resolved, and a stored
//! secret's value, released only after the extension's gate (see
//! "Secrets" in the module docs of `super`).

use shared::action::{Action, SecretText};
use shared::error::{ErrorCode, WireError};
use shared::gate::SecretBinding;
use shared::names::{MAX_SECRET_NAME_CHARS, is_valid_secret_name};
use shared::protocol::BridgeToExt;
use shared::tools::{MAX_TYPED_CHARS, ValueSource};
use shared::url::Origin;

use crate::server::AppState;
use crate::server::ext::SecretGrant;

/// A stored secret an action types: its name and site binding (read
/// without decrypting anything).
#[derive(Debug, Clone)]
pub(super) struct SecretUse {
    name: String,
    /// Origin patterns; empty: bound to no site.
    sites: Vec<String>,
}

impl SecretUse {
    /// The pure decision's view of it (`shared::gate::dispatch`).
    pub(super) fn binding(&self) -> SecretBinding<'_> {
        SecretBinding { name: &self.name, sites: &self.sites }
    }

    /// What the hub keeps for the `Act` with gate id `request`, decided
    /// for `origin`: [`release_secret`] answers only that.
    pub(super) fn grant(&self, request: u64, origin: &str) -> SecretGrant {
        SecretGrant { request, name: self.name.clone(), sites: self.sites.clone(), origin: origin.to_string() }
    }
}

/// A value the agent supplied, checked ([`check_value`]).
pub(super) enum Typed {
    Literal(String),
    Secret(SecretUse),
}

impl Typed {
    /// The action that types it, and the secret it names.
    pub(super) fn into_action(self, submit: bool) -> (Action, Option<SecretUse>) {
        match self {
            Typed::Literal(text) => (Action::Type { text, submit }, None),
            Typed::Secret(s) => (Action::TypeSecret { name: s.name.clone(), submit }, Some(s)),
        }
    }
}

fn no_such_secret(name: &str) -> WireError {
    WireError::new(
        ErrorCode::NotFound,
        format!("no secret named {name}; the person stores it with `chaperone secret set {name}`"),
    )
}

/// Runs a read of the secret store on the blocking pool; store errors go
/// to the log, the agent gets `INTERNAL`.
async fn with_store<T: Send + 'static>(
    state: &AppState,
    name: &str,
    read: impl FnOnce(&crate::secrets::SecretStore, &str) -> Result<Option<T>, crate::error::Error> + Send + 'static,
) -> Result<T, WireError> {
    let Some(store) = state.config().secrets.clone() else { return Err(no_such_secret(name)) };
    let owned = name.to_string();
    match tokio::task::spawn_blocking(move || read(&store, &owned)).await {
        Ok(Ok(Some(v))) => Ok(v),
        Ok(Ok(None)) => Err(no_such_secret(name)),
        Ok(Err(e)) => {
            tracing::error!(error = %e, name, "secret store read failed");
            Err(WireError::new(
                ErrorCode::Internal,
                format!("the secret {name} could not be read (see the bridge log)"),
            ))
        }
        Err(_) => Err(WireError::internal("the secret store did not answer")),
    }
}

/// Refuses an agent's value before anything is resolved or dispatched: a
/// literal that is too long, a secret name of the wrong shape or unknown.
/// A secret's binding is read; its value is not (nothing is decrypted
/// before [`release_secret`]).
pub(super) async fn check_value(state: &AppState, v: &ValueSource) -> Result<Typed, WireError> {
    match v {
        ValueSource::Literal(s) => {
            if s.chars().count() > MAX_TYPED_CHARS {
                return Err(WireError::new(
                    ErrorCode::InvalidRequest,
                    format!("text longer than {MAX_TYPED_CHARS} characters"),
                ));
            }
            Ok(Typed::Literal(s.clone()))
        }
        ValueSource::Secret(r) => {
            if !is_valid_secret_name(&r.secret) {
                return Err(WireError::new(
                    ErrorCode::InvalidRequest,
                    format!("a secret name is 1 to {MAX_SECRET_NAME_CHARS} of A-Z a-z 0-9 _ . -"),
                ));
            }
            let sites = with_store(state, &r.secret, |store, name| store.sites(name)).await?;
            Ok(Typed::Secret(SecretUse { name: r.secret.clone(), sites }))
        }
    }
}

/// A secret a flow run names: its name's shape and that it is stored
/// (nothing decrypted), before any step runs.
pub(crate) async fn check_secret(state: &AppState, name: &str) -> Result<(), WireError> {
    check_value(state, &ValueSource::Secret(shared::tools::SecretRef { secret: name.to_string() })).await.map(|_| ())
}

/// Answers the extension's `SecretRequest` for the `Act` with gate id
/// `request` on `connection` (see the module docs): the value in one
/// `BridgeToExt::Secret` frame, or a `SecretRefused`.
pub(crate) async fn release_secret(state: AppState, connection: u64, request: u64, origin: String) {
    let frame = match secret_for(&state, connection, request, &origin).await {
        Ok(value) => BridgeToExt::Secret { request, value: SecretText::new(value.expose().to_string()) },
        Err(error) => BridgeToExt::SecretRefused { request, error },
    };
    if !state.hub().send_to(connection, frame).await {
        tracing::debug!(connection, request, "the connection went away before its secret answer");
    }
}

async fn secret_for(
    state: &AppState,
    connection: u64,
    request: u64,
    origin: &str,
) -> Result<crate::secrets::SecretValue, WireError> {
    let refuse = |reason: &'static str, message: String| {
        tracing::warn!(connection, request, reason, "secret request refused");
        WireError::new(ErrorCode::PermissionDenied, message)
    };
    let grant = state.hub().claim_secret(connection, request).map_err(|why| {
        refuse(why.as_str(), "no action waiting on this connection may receive a secret under this id".into())
    })?;
    let SecretGrant { name, sites, origin: decided, .. } = grant;
    // Compared as origins (`shared::url::Origin`), and only between web
    // pages: a secret is never released for a page that is not http(s).
    let same = matches!((Origin::of(origin), Origin::of(&decided)), (Some(a), Some(b)) if a == b);
    if !same {
        return Err(refuse(
            "other_origin",
            format!("the page is no longer on {decided}, where typing the secret {name} was decided; nothing typed"),
        ));
    }
    // The binding as it is now (the person may have set the secret again
    // while the action waited), read with the value from the same row.
    let (value, now_sites) = with_store(state, &name, |store, name| store.get_with_sites(name)).await?;
    if !now_sites.is_empty() && !crate::secrets::site_allows(&now_sites, origin) {
        return Err(refuse("not_bound_here", format!("the secret {name} is not bound to {origin}; nothing typed")));
    }
    if now_sites.is_empty() && !sites.is_empty() {
        // Decided without asking the person, as a bound secret; unbound
        // now, it needs their answer.
        return Err(refuse(
            "unbound_since",
            format!("the secret {name} lost its site binding while the action waited; nothing typed, try again"),
        ));
    }
    tracing::info!(connection, request, name = %name, "secret released to the extension");
    Ok(value)
}
