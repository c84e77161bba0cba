// Chaperone approval window loader. All logic is Rust (extension/worker, start_approval).
import init, { start_approval } from './worker/worker.js';

init({ module_or_path: new URL('./worker/worker_bg.wasm', import.meta.url) })
  .then(() => start_approval())
  .catch((e) => {
    const el = document.getElementById('count');
    if (el) el.textContent = 'Chaperone failed to start: ' + String((e && e.message) || e);
  });
