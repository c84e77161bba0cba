// Chaperone popup loader. All logic is Rust (extension/worker, start_popup).
import init, { start_popup } from './worker/worker.js';

init({ module_or_path: new URL('./worker/worker_bg.wasm', import.meta.url) })
  .then(() => start_popup())
  .catch((e) => {
    const el = document.getElementById('status');
    if (el) el.textContent = 'Chaperone failed to start: ' + String((e && e.message) || e);
  });
