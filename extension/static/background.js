// Chaperone service worker loader. All logic is Rust (extension/worker).
// Wake-up events are registered synchronously here (MV3 requires it) and
// handed to the WASM once it is ready.
import init, * as worker from './worker/worker.js';

const ready = init({ module_or_path: new URL('./worker/worker_bg.wasm', import.meta.url) }).then(() => {
  worker.start_worker();
  return worker;
});
ready.catch((e) => console.error('chaperone: worker failed to start:', e));

// Firefox runs this file as an event page (manifest/firefox.json); what it
// lacks is skipped here and in extension/worker/src/browser.rs.
const gecko = chrome.runtime.getURL('').startsWith('moz-extension:');
const extra = gecko ? [] : ['extraHeaders'];

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  ready
    .then((w) => w.on_runtime_message(msg, sender))
    .then(sendResponse, (e) => sendResponse({ type: 'error', message: String((e && e.message) || e) }));
  return true;
});
// Downloads (extension/worker/src/downloads.rs) and the content script's
// flavour (page_csp.rs): webRequest only observes.
chrome.webRequest.onHeadersReceived.addListener(
  (d) => { ready.then((w) => { w.on_document_headers(d); w.on_headers_received(d); }); },
  { urls: ['http://*/*', 'https://*/*'], types: ['main_frame', 'sub_frame', 'other'] },
  ['responseHeaders'],
);
// Pages that fail to load (extension/worker/src/load_errors.rs): observed only.
chrome.webRequest.onErrorOccurred.addListener(
  (d) => { ready.then((w) => w.on_load_error(d)); },
  { urls: ['http://*/*', 'https://*/*'], types: ['main_frame'] },
);
chrome.webRequest.onBeforeRequest.addListener(
  (d) => { ready.then((w) => w.on_load_start(d)); },
  { urls: ['http://*/*', 'https://*/*'], types: ['main_frame'] },
);
// Network capture of agent tabs (extension/worker/src/network.rs): observed only.
{
  // Firefox names a WebSocket's handshake by its ws:// address: listed
  // there too (its messages Firefox does not give add-ons).
  const all = { urls: gecko ? ['http://*/*', 'https://*/*', 'ws://*/*', 'wss://*/*'] : ['http://*/*', 'https://*/*'] };
  const net = (name) => (d) => { ready.then((w) => w[name](d)); };
  // Firefox gives an agent tab's response bodies to a stream filter opened
  // in this very call of a listener registered as "blocking", or never
  // (extension/worker/src/response_filter.rs). The listener returns
  // nothing: no request waits for it.
  let loaded = null;
  ready.then((w) => { loaded = w; });
  const filterFor = (d) => (gecko && d.type !== 'websocket' && loaded && loaded.wants_response_body(d.tabId)
    ? browser.webRequest.filterResponseData(d.requestId) : undefined);
  chrome.webRequest.onBeforeRequest.addListener((d) => {
    const filter = filterFor(d);
    ready.then((w) => w.on_net_request(d, filter));
  }, all, gecko ? ['blocking', 'requestBody'] : ['requestBody']);
  chrome.webRequest.onSendHeaders.addListener(net('on_net_send_headers'), all, ['requestHeaders', ...extra]);
  chrome.webRequest.onHeadersReceived.addListener(net('on_net_headers'), all, ['responseHeaders', ...extra]);
  chrome.webRequest.onBeforeRedirect.addListener(net('on_net_redirect'), all, ['responseHeaders', ...extra]);
  chrome.webRequest.onCompleted.addListener(net('on_net_completed'), all, ['responseHeaders', ...extra]);
  chrome.webRequest.onErrorOccurred.addListener(net('on_net_error'), all);
}
// The bodies build (manifest with `debugger`; extension/worker/src/bodies.rs):
// response bodies and WebSocket messages of agent tabs.
if (chrome.debugger) {
  chrome.debugger.onEvent.addListener((source, method, params) => {
    ready.then((w) => w.on_debugger_event(source, method, params));
  });
  chrome.debugger.onDetach.addListener((source, reason) => { ready.then((w) => w.on_debugger_detach(source, reason)); });
}
if (chrome.downloads.onDeterminingFilename) chrome.downloads.onDeterminingFilename.addListener((item, suggest) => {
  ready.then((w) => w.on_determining_filename(item, suggest), () => suggest());
  return true;
});
// Firefox has no naming hook: the same verdict applies to the running download, unrenamed.
else chrome.downloads.onCreated.addListener((item) => { ready.then((w) => w.on_determining_filename(item, () => {})); });
chrome.tabs.onCreated.addListener((tab) => ready.then((w) => w.on_tab_created(tab)));
chrome.downloads.onChanged.addListener((delta) => ready.then((w) => w.on_download_changed(delta)));
chrome.alarms.onAlarm.addListener((alarm) => ready.then((w) => w.on_alarm(alarm.name)));
// A page finishing its load wakes a worker nothing else would start (after
// the extension was reloaded, e.g. when incognito access changes, no alarm
// is left): it connects again.
chrome.tabs.onUpdated.addListener((_id, change) => {
  if (change.status === 'complete') ready.then((w) => w.on_wake('tab'));
});
chrome.runtime.onStartup.addListener(() => ready.then((w) => w.on_wake('startup')));
chrome.runtime.onInstalled.addListener(() => ready.then((w) => w.on_wake('installed')));
