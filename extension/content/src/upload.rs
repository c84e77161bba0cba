//! Files set on an `<input type=file>` (see `shared::files`). The worker
//! stages the bytes the bridge released after its gate
//! ([`part`], `PageRequest::UploadPart`, in order); the `Act` that follows
//! ([`set_files`]) takes exactly the staged files — as many as it names,
//! each of the size it names — builds `File` objects with a
//! `DataTransfer`, sets them on the input and fires `input` and `change`
//! like a person's choice would. Staged bytes are dropped by any `Act`.

use std::cell::RefCell;

use js_sys::{Array, Reflect, Uint8Array};
use shared::error::{ErrorCode, WireError};
use shared::files::UploadFile;
use wasm_bindgen::prelude::*;
use web_sys::Element;

use crate::dom;
use crate::events::{bubbling, dispatch, global_ctor};

thread_local! {
    static STAGED: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Stages part of file `file` (`first`: the file starts over).
pub fn part(file: u32, data: &str, first: bool) -> Result<(), WireError> {
    let bytes = shared::files::base64_decode(data)
        .ok_or_else(|| WireError::new(ErrorCode::InvalidRequest, "bad upload data"))?;
    let i = file as usize;
    if i >= shared::files::MAX_UPLOAD_FILES {
        return Err(WireError::new(ErrorCode::InvalidRequest, "too many upload files"));
    }
    STAGED.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() <= i {
            s.resize_with(i + 1, Vec::new);
        }
        if first {
            s[i].clear();
        }
        if (s[i].len() + bytes.len()) as u64 > shared::files::MAX_UPLOAD_FILE_BYTES {
            return Err(WireError::new(ErrorCode::InvalidRequest, "an upload file is larger than allowed"));
        }
        s[i].extend_from_slice(&bytes);
        Ok(())
    })
}

/// Drops whatever is staged.
pub fn clear() {
    STAGED.with(|s| s.borrow_mut().clear());
}

/// Sets the staged files, named by `files`, on the file input `el`.
pub fn set_files(el: &Element, files: &[UploadFile]) -> Result<(), WireError> {
    let staged = STAGED.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let is_file_input =
        el.local_name() == "input" && dom::attr(el, "type").is_some_and(|t| t.eq_ignore_ascii_case("file"));
    if !is_file_input {
        return Err(WireError::new(ErrorCode::InvalidRequest, "files go only into a file input (<input type=file>)"));
    }
    if files.len() > 1 && !dom::prop_bool(el, "multiple") {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            format!("this file input takes one file, not {}; nothing set", files.len()),
        ));
    }
    if dom::prop_bool(el, "disabled") {
        return Err(WireError::new(ErrorCode::InvalidRequest, "this file input is disabled; nothing set"));
    }
    if staged.len() != files.len() || staged.iter().zip(files).any(|(b, f)| b.len() as u64 != f.size) {
        return Err(WireError::internal("the staged files do not match the action; nothing set"));
    }
    let dt = Reflect::construct(&global_ctor("DataTransfer")?, &Array::new())
        .map_err(|_| WireError::internal("no DataTransfer here"))?;
    let items = Reflect::get(&dt, &JsValue::from_str("items")).map_err(|_| WireError::internal("no items"))?;
    let file_ctor = global_ctor("File")?;
    for (bytes, f) in staged.iter().zip(files) {
        let parts = Array::of1(&Uint8Array::from(&bytes[..]));
        let file = Reflect::construct(&file_ctor, &Array::of2(&parts, &JsValue::from_str(&f.name)))
            .map_err(|_| WireError::internal("a File could not be made"))?;
        crate::dom::call(&items, "add", &[file]).map_err(|_| WireError::internal("a file could not be added"))?;
    }
    let list = Reflect::get(&dt, &JsValue::from_str("files")).map_err(|_| WireError::internal("no files"))?;
    Reflect::set(el, &JsValue::from_str("files"), &list)
        .map_err(|_| WireError::internal("the files could not be set"))?;
    let t: &JsValue = el.as_ref();
    dispatch(t, "Event", "input", &bubbling());
    dispatch(t, "Event", "change", &bubbling());
    Ok(())
}
