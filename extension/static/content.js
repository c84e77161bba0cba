// Chaperone content script loader (classic script, isolated world). The
// worker injects it (chrome.scripting.executeScript) the first time it needs
// a page; nothing of the extension is web-accessible. `cargo xtask build`
// writes it twice, with the Rust content script (extension/content) in place
// of the marker below: `content.js` holds it as plain JS (wasm2js), which
// strict page CSPs cannot block, and `content-wasm.js` as WebAssembly, for
// pages whose policy allows that (extension/worker/src/page_csp.rs). The
// latter is a promise, of nothing when the page has a <meta> policy. The
// script's value tells the worker whether it runs (true) or stepped aside.
(() => {
  const present = globalThis.__chaperoneContent; // this world only; pages cannot see it
  if (present) return present.then((c) => !!c); // injected twice
  const content = Promise.resolve(/* chaperone:content-module */ null).catch(() => null);
  globalThis.__chaperoneContent = content;
  return content.then((c) => {
    if (!c) {
      delete globalThis.__chaperoneContent;
      return false;
    }
    c.start_content((m) => chrome.runtime.sendMessage(m));
    const answer = (msg) => c.handle_message(msg).catch((e) => JSON.stringify({
      err: { code: 'INTERNAL', message: 'content script: ' + String((e && e.message) || e).slice(0, 200) },
    }));
    const fromWorker = (s) => s && s.id === chrome.runtime.id && !s.tab;
    chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
      if (!fromWorker(sender)) return false;
      answer(msg).then(sendResponse);
      return true;
    });
    // The worker's port for the requests after the first (worker/src/channel.rs).
    chrome.runtime.onConnect.addListener((port) => {
      if (port.name !== 'chaperone' || !fromWorker(port.sender)) return port.disconnect();
      port.onMessage.addListener(({ id, msg }) => answer(msg).then((reply) => {
        try { port.postMessage({ id, reply }); } catch (_) { /* the worker has gone */ }
      }));
    });
    return true;
  });
})();
