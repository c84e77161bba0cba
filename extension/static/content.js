// Chaperone content script loader (classic script). The Rust content script
// (extension/content, compiled to plain JS so strict page CSPs cannot block
// it) is imported lazily on the first message from the service worker.
(() => {
  if (globalThis.__chaperoneContent) return; // injected twice (scripting.executeScript)
  globalThis.__chaperoneContent = true;
  let mod = null;
  chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || sender.tab) return false;
    mod = mod || import(chrome.runtime.getURL('content/content.js'));
    mod
      .then((m) => m.handle_message(msg))
      .then(sendResponse, (e) => {
        mod = null;
        sendResponse(JSON.stringify({ err: { code: 'INTERNAL', message: 'content script: ' + String((e && e.message) || e).slice(0, 200) } }));
      });
    return true;
  });
})();
