//! Typed bindings for the `chrome.*` extension APIs the worker and the
//! popup use. Fallible/async calls are `catch` and return `Result`.

use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    // ---- runtime
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = sendNativeMessage, catch)]
    pub fn send_native_message(application: &str, message: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = sendMessage, catch)]
    pub async fn runtime_send_message(message: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getURL)]
    pub fn runtime_get_url(path: &str) -> String;

    // ---- debugger (the bodies build only: `crate::bodies`)
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = attach, catch)]
    pub async fn debugger_attach(target: &Object, version: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = detach, catch)]
    pub async fn debugger_detach(target: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "debugger"], js_name = sendCommand, catch)]
    pub async fn debugger_send_command(target: &Object, method: &str, params: &Object) -> Result<JsValue, JsValue>;

    // ---- tabs
    /// A `tabs.Tab`; fields are optional depending on permissions/state.
    #[derive(Debug, Clone)]
    pub type Tab;
    #[wasm_bindgen(method, getter)]
    pub fn id(this: &Tab) -> Option<f64>;
    #[wasm_bindgen(method, getter)]
    pub fn url(this: &Tab) -> Option<String>;
    #[wasm_bindgen(method, getter, js_name = pendingUrl)]
    pub fn pending_url(this: &Tab) -> Option<String>;
    #[wasm_bindgen(method, getter)]
    pub fn title(this: &Tab) -> Option<String>;
    #[wasm_bindgen(method, getter)]
    pub fn active(this: &Tab) -> Option<bool>;
    #[wasm_bindgen(method, getter)]
    pub fn status(this: &Tab) -> Option<String>;
    #[wasm_bindgen(method, getter, js_name = windowId)]
    pub fn window_id(this: &Tab) -> Option<f64>;
    /// -1 when the tab is in no group.
    #[wasm_bindgen(method, getter, js_name = groupId)]
    pub fn group_id(this: &Tab) -> Option<f64>;

    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = get, catch)]
    pub async fn tabs_get(tab_id: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = create, catch)]
    pub async fn tabs_create(props: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = update, catch)]
    pub async fn tabs_update(tab_id: f64, props: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = remove, catch)]
    pub async fn tabs_remove(tab_id: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = goBack, catch)]
    pub async fn tabs_go_back(tab_id: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = goForward, catch)]
    pub async fn tabs_go_forward(tab_id: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = reload, catch)]
    pub async fn tabs_reload(tab_id: f64) -> Result<JsValue, JsValue>;
    /// `chrome.tabs.captureVisibleTab(windowId, options)`: a `data:` URL.
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = captureVisibleTab, catch)]
    pub async fn tabs_capture_visible_tab(window_id: f64, options: &Object) -> Result<JsValue, JsValue>;
    /// Returns a Promise so callers can race it against a timeout.
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = sendMessage, catch)]
    pub fn tabs_send_message(tab_id: f64, message: &JsValue, options: &Object) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs", "onUpdated"], js_name = addListener)]
    pub fn tabs_on_updated_add_listener(cb: &Function);
    #[wasm_bindgen(js_namespace = ["chrome", "tabs", "onRemoved"], js_name = addListener)]
    pub fn tabs_on_removed_add_listener(cb: &Function);
    #[wasm_bindgen(js_namespace = ["chrome", "tabs", "onActivated"], js_name = addListener)]
    pub fn tabs_on_activated_add_listener(cb: &Function);
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = query, catch)]
    pub async fn tabs_query(query: &Object) -> Result<JsValue, JsValue>;

    /// `chrome.tabs.group(options)`: the group id.
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = group, catch)]
    pub async fn tabs_group(options: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = ungroup, catch)]
    pub async fn tabs_ungroup(tab_ids: f64) -> Result<JsValue, JsValue>;

    // ---- tab groups
    #[wasm_bindgen(js_namespace = ["chrome", "tabGroups"], js_name = update, catch)]
    pub async fn tab_groups_update(group_id: f64, props: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "tabGroups"], js_name = get, catch)]
    pub async fn tab_groups_get(group_id: f64) -> Result<JsValue, JsValue>;

    // ---- windows
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = update, catch)]
    pub async fn windows_update(window_id: f64, props: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = get, catch)]
    pub async fn windows_get(window_id: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = getLastFocused, catch)]
    pub async fn windows_get_last_focused() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = create, catch)]
    pub async fn windows_create(props: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows"], js_name = remove, catch)]
    pub async fn windows_remove(window_id: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "windows", "onRemoved"], js_name = addListener)]
    pub fn windows_on_removed_add_listener(cb: &Function);

    // ---- action (toolbar button)
    #[wasm_bindgen(js_namespace = ["chrome", "action"], js_name = setBadgeText, catch)]
    pub async fn action_set_badge_text(details: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "action"], js_name = setBadgeBackgroundColor, catch)]
    pub async fn action_set_badge_background_color(details: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "action"], js_name = setTitle, catch)]
    pub async fn action_set_title(details: &Object) -> Result<JsValue, JsValue>;

    // ---- scripting
    #[wasm_bindgen(js_namespace = ["chrome", "scripting"], js_name = executeScript, catch)]
    pub async fn scripting_execute_script(injection: &Object) -> Result<JsValue, JsValue>;

    // ---- storage
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "session"], js_name = set, catch)]
    pub async fn storage_session_set(items: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "session"], js_name = get, catch)]
    pub async fn storage_session_get(keys: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = set, catch)]
    pub async fn storage_local_set(items: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "local"], js_name = get, catch)]
    pub async fn storage_local_get(keys: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "storage", "onChanged"], js_name = addListener)]
    pub fn storage_on_changed_add_listener(cb: &Function);

    // ---- alarms: `crate::browser::alarms_create` (Firefox returns no promise)

    // ---- timers (global in workers and pages)
    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(handler: &Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    pub fn clear_timeout(id: &JsValue);
}

/// `chrome.runtime.id`: this extension's id as `sender.id` gives it (in
/// Chromium the host of its `chrome-extension://` URLs; in Firefox the
/// add-on id, which its `moz-extension://` host is not).
pub fn runtime_id() -> String {
    use crate::util::get;
    get(&get(&get(&js_sys::global(), "chrome"), "runtime"), "id").as_string().unwrap_or_default()
}
