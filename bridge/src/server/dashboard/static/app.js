// The review dashboard: read-only. Every element is built with
// createElement and textContent; nothing from the audit log is ever
// parsed as markup. The token comes in the URL fragment (#t=…), is kept in
// sessionStorage for this tab and removed from the address bar at once.
"use strict";
(function () {
  const KEY = "chaperone-dashboard-token";
  const POLL_MS = 1500;
  const m = /^#t=([0-9a-f]{64})$/.exec(location.hash);
  if (m) sessionStorage.setItem(KEY, m[1]);
  if (location.hash) history.replaceState(null, "", location.pathname);
  const token = sessionStorage.getItem(KEY);
  const $ = (id) => document.getElementById(id);
  const status = $("status");

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function row(cells) {
    const tr = document.createElement("tr");
    for (const c of cells) tr.appendChild(c instanceof Node ? wrap(c) : el("td", c));
    return tr;
  }
  function wrap(node) {
    if (node.tagName === "TD") return node;
    const td = document.createElement("td");
    td.appendChild(node);
    return td;
  }
  function fill(id, rows) {
    const body = $(id).tBodies[0];
    body.replaceChildren(...rows);
  }
  function options(select, values, label) {
    const keep = select.value;
    const first = el("option", "all");
    first.value = "";
    const opts = [first];
    for (const v of values) {
      const o = el("option", label ? label(v) : v.key);
      o.value = v.key;
      opts.push(o);
    }
    if (keep && !values.some((v) => v.key === keep)) {
      const o = el("option", keep);
      o.value = keep;
      opts.push(o);
    }
    select.replaceChildren(...opts);
    select.value = keep;
  }
  const time = (t) => (t ? t.replace("T", " ").replace("Z", "") : "");
  // 840 ms, 12.3 s, 4 min 5 s (as `chaperone report` writes it).
  function duration(ms) {
    if (ms === undefined || ms === null) return "";
    if (ms < 1000) return ms + " ms";
    if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
    return Math.floor(ms / 60000) + " min " + Math.floor((ms % 60000) / 1000) + " s";
  }
  // The page: its URL (query already stripped by the store), and the
  // page's own title under it, as text.
  function pageCell(r) {
    const td = el("td", r.url || "", "page");
    if (r.title) td.appendChild(el("div", r.title, "title"));
    return td;
  }

  function render(d) {
    fill("agents", d.sessions.map((s) => {
      const ended = s.ended ? time(s.ended) : "running (last row " + time(s.last) + ")";
      const tr = row([s.client || "(unknown client)", s.session, time(s.started), ended, s.tabs, s.actions,
        s.asked, s.approved, s.denied, s.timed_out, s.handoffs]);
      if ($("f-session").value === s.session) tr.className = "selected";
      tr.addEventListener("click", () => {
        $("f-session").value = $("f-session").value === s.session ? "" : s.session;
        refresh(true);
      });
      return tr;
    }));
    options($("f-session"), d.sessions.map((s) => ({ key: s.session, client: s.client })),
      (v) => (v.client || "(unknown)") + " · " + v.key);
    options($("f-site"), d.sites);
    fill("timeline", d.rows.map((r) => {
      const risk = el("td", r.risk || "", r.risk ? "risk-" + r.risk : "");
      if (r.reasons && r.reasons.length) {
        const ul = el("ul", null, "reasons");
        for (const why of r.reasons) ul.appendChild(el("li", why));
        risk.appendChild(ul);
      }
      return row([time(r.time), r.client || r.session, r.tool, pageCell(r),
        el("td", r.summary, "summary"), risk,
        el("td", r.decision || "", r.decision ? "d-" + r.decision : ""), (r.decided_by || "").replace("_", " "),
        r.outcome || "", duration(r.duration_ms)]);
    }));
    $("more").hidden = !d.more;
    fill("sites", d.sites.map((c) => row([c.key, c.count])));
    fill("days", d.days.map((c) => row([c.key, c.count])));
  }

  let last = null;
  let timer = null;
  async function refresh(force) {
    clearTimeout(timer);
    const q = new URLSearchParams();
    for (const [name, id] of [["session", "f-session"], ["site", "f-site"], ["decision", "f-decision"],
      ["risk", "f-risk"], ["q", "f-q"]]) {
      if ($(id).value) q.set(name, $(id).value);
    }
    try {
      const resp = await fetch("/dashboard/data?" + q.toString(), {
        headers: { Authorization: "Bearer " + token }, cache: "no-store", credentials: "omit",
      });
      if (!resp.ok) throw new Error("the bridge answered " + resp.status);
      const text = await resp.text();
      if (force || text !== last) {
        last = text;
        render(JSON.parse(text));
      }
      status.className = "";
      status.textContent = "Live · updated " + new Date().toLocaleTimeString();
    } catch (e) {
      status.className = "error";
      status.textContent = "Not updated: " + e.message + ". Is the bridge running?";
    }
    timer = setTimeout(refresh, POLL_MS);
  }

  if (!token) {
    status.className = "error";
    status.textContent = "No access: open the dashboard with `chaperone dashboard`.";
    return;
  }
  for (const id of ["f-session", "f-site", "f-decision", "f-risk"]) $(id).addEventListener("change", () => refresh(true));
  let typing = null;
  $("f-q").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(() => refresh(true), 250); });
  $("filters").addEventListener("submit", (e) => e.preventDefault());
  refresh(true);
})();
