//! The bytes of an upload, fetched for one gated `Act` (see
//! `shared::files`'s module docs). The bridge's `Act` carries only the
//! files' names, sizes, hashes and folders (`Action::UploadFiles`);
//! `gate::act` calls [`stage`] only after its whole gate let the action
//! through, right before the content script acts. Exactly:
//!
//! - One `ExtToBridge::UploadRequest { upload }` goes to the bridge on the
//!   current connection. `UploadChunk` frames count only on that
//!   connection for that upload ([`chunk`]); the last one ends it. No end
//!   within `COMMAND_TIMEOUT_MS` → `TIMEOUT`; the connection closing →
//!   `EXTENSION_DISCONNECTED`; the bridge refusing → its error. Nothing is
//!   set on the page in any of these cases.
//! - Each chunk's size is checked against what the `Act` announced (no
//!   file grows past its size); then the chunks go to the content script
//!   in order (`PageRequest::UploadPart`), which builds the `File`s only
//!   when the `Act` itself arrives.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Function, Promise};
use shared::action::Action;
use shared::error::{ErrorCode, WireError};
use shared::protocol::{ExtToBridge, PageRequest, TabId};
use wasm_bindgen::prelude::*;

use crate::util::with_timeout;

struct Incoming {
    generation: u64,
    resolve: Function,
    /// `(file, base64)` in arrival order.
    chunks: Vec<(u32, String)>,
    /// `None` while more may come; the error if the bridge refused.
    done: Option<Result<(), WireError>>,
}

thread_local! {
    static INCOMING: RefCell<HashMap<u64, Incoming>> = RefCell::new(HashMap::new());
}

/// For an `Action::UploadFiles`: fetches its bytes from the bridge and
/// stages them in the page of `tab`. Any other action: nothing.
pub async fn stage(tab: TabId, action: &Action) -> Result<(), WireError> {
    let Action::UploadFiles { upload, files } = action else { return Ok(()) };
    let upload = *upload;
    let Some(generation) = crate::conn::connected_generation() else {
        return Err(WireError::new(
            ErrorCode::ExtensionDisconnected,
            "the extension lost the bridge before the upload; nothing set",
        ));
    };
    if INCOMING.with(|w| w.borrow().contains_key(&upload)) {
        return Err(WireError::new(ErrorCode::InvalidRequest, "this upload is already being fetched"));
    }
    let promise = Promise::new(&mut |resolve, _reject| {
        INCOMING
            .with(|w| w.borrow_mut().insert(upload, Incoming { generation, resolve, chunks: Vec::new(), done: None }));
    });
    crate::conn::send(generation, &ExtToBridge::UploadRequest { upload });
    let _ = with_timeout(promise, shared::limits::COMMAND_TIMEOUT_MS as u32).await;
    let got = INCOMING.with(|w| w.borrow_mut().remove(&upload));
    let chunks = match got {
        Some(Incoming { done: Some(Ok(())), chunks, .. }) => chunks,
        Some(Incoming { done: Some(Err(e)), .. }) => return Err(e),
        _ if crate::conn::connected_generation() != Some(generation) => {
            return Err(WireError::new(
                ErrorCode::ExtensionDisconnected,
                "the bridge went away during the upload; nothing set",
            ));
        }
        _ => return Err(WireError::new(ErrorCode::Timeout, "the bridge did not send the files in time; nothing set")),
    };
    // Sizes as announced: decoded length of each file's chunks.
    let mut sizes = vec![0u64; files.len()];
    for (file, data) in &chunks {
        let Some(size) = sizes.get_mut(*file as usize) else {
            return Err(WireError::internal("the bridge sent a file the action does not name"));
        };
        let pad = data.bytes().rev().take_while(|&b| b == b'=').count() as u64;
        *size += (data.len() as u64 / 4) * 3 - pad;
    }
    if sizes.iter().zip(files).any(|(got, f)| *got != f.size) {
        return Err(WireError::new(
            ErrorCode::Internal,
            "the files the bridge sent do not have the announced sizes; nothing set",
        ));
    }
    let mut started = vec![false; files.len()];
    for (file, data) in chunks {
        let first = !std::mem::replace(&mut started[file as usize], true);
        let msg = PageRequest::UploadPart { file, data, first };
        crate::tabs::ask_page(tab, &msg).await?;
    }
    Ok(())
}

/// A chunk of upload `upload` on connection `generation`; dropped unless
/// that upload is being fetched on that connection and not ended.
pub fn chunk(generation: u64, upload: u64, file: u32, data: String, last: bool) {
    let resolve = INCOMING.with(|w| {
        let mut w = w.borrow_mut();
        let inc = w.get_mut(&upload).filter(|x| x.generation == generation && x.done.is_none())?;
        inc.chunks.push((file, data));
        if last {
            inc.done = Some(Ok(()));
            Some(inc.resolve.clone())
        } else {
            None
        }
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// The bridge refused upload `upload`.
pub fn refused(generation: u64, upload: u64, error: WireError) {
    let resolve = INCOMING.with(|w| {
        let mut w = w.borrow_mut();
        let inc = w.get_mut(&upload).filter(|x| x.generation == generation && x.done.is_none())?;
        inc.done = Some(Err(error));
        Some(inc.resolve.clone())
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// Connection `generation` closed: its uploads end now, without bytes.
pub fn connection_closed(generation: u64) {
    let ended: Vec<Function> = INCOMING
        .with(|w| w.borrow().values().filter(|x| x.generation == generation).map(|x| x.resolve.clone()).collect());
    for resolve in ended {
        let _ = resolve.call0(&JsValue::NULL);
    }
}
