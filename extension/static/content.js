// Chaperone content script loader (classic script, isolated world). The
// worker injects it (chrome.scripting.executeScript) the first time it needs
// a page; nothing of the extension is web-accessible. `cargo xtask build`
// puts the Rust content script (extension/content, plain JS by wasm2js, so
// strict page CSPs cannot block it) in place of the marker below.
(() => {
  if (globalThis.__chaperoneContent) return; // injected twice
  const content = /* chaperone:content-module */ null;
  globalThis.__chaperoneContent = content; // this world only; pages cannot see it
  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || sender.tab) return false;
    content.handle_message(msg).then(sendResponse, (e) => sendResponse(JSON.stringify({
      err: { code: 'INTERNAL', message: 'content script: ' + String((e && e.message) || e).slice(0, 200) },
    })));
    return true;
  });
})();
