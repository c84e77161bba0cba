//! Playing the human: real (trusted) mouse clicks and key presses in the
//! extension's own pages — the approval window the service worker opens
//! (`chrome-extension://<id>/approval.html`, a page target in headless
//! Chromium) and the popup opened in a tab.

use std::future::Future;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

use crate::{Cdp, CdpSession, ToolResult};

/// Once the person has done their part, the call that waited for them has
/// this long to end.
pub const AFTER_PERSON: Duration = Duration::from_secs(60);

/// Runs the agent's `call` while the `person` plays their part, and judges
/// the call from the person's part on: once they are done, it must answer
/// within [`AFTER_PERSON`] (the failure says how long their part took). A
/// call that ends first is an early end unless the person's part still
/// ends within `grace`: their answer can end the call before their click's
/// own CDP answer comes back (the window closes under it).
pub async fn with_person<P>(
    call: impl Future<Output = Result<ToolResult>>,
    person: impl Future<Output = P>,
    grace: Duration,
) -> (ToolResult, P) {
    let started = std::time::Instant::now();
    tokio::pin!(call);
    tokio::pin!(person);
    tokio::select! {
        p = &mut person => {
            let took = started.elapsed();
            let r = tokio::time::timeout(AFTER_PERSON, call).await.unwrap_or_else(|_| {
                panic!("the call did not answer within {AFTER_PERSON:?} of the person's part (which took {took:?})")
            });
            (r.unwrap_or_else(|e| panic!("the call answers (the person's part took {took:?}): {e:#}")), p)
        }
        r = &mut call => {
            let r = r.expect("the call answers");
            match tokio::time::timeout(grace, person).await {
                Ok(p) => (r, p),
                Err(_) => panic!("the call ended before the person was asked: {}", r.raw),
            }
        }
    }
}

/// The person at the browser.
pub struct Human {
    cdp: Cdp,
    popup: Option<CdpSession>,
}

pub fn approval_url() -> String {
    format!("chrome-extension://{}/approval.html", shared::EXTENSION_ID)
}

pub fn popup_url() -> String {
    format!("chrome-extension://{}/popup.html", shared::EXTENSION_ID)
}

/// One request as the approval window shows it.
#[derive(Debug, Clone)]
pub struct ShownRequest {
    pub request: u64,
    /// The card's whole text (summary, risk, reasons, element, page).
    pub text: String,
}

impl Human {
    pub fn new(cdp: &Cdp) -> Human {
        Human { cdp: cdp.clone(), popup: None }
    }

    /// The approval window, once the extension has opened it.
    /// A window found just as it closes (its last request decided while
    /// the next opens another) may never answer: each attempt is bounded
    /// and another window is looked for until `within` runs out.
    pub async fn approval_window(&self, within: Duration) -> Result<CdpSession> {
        let want = approval_url();
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let t = self
                .cdp
                .wait_for_target(left, |t| t.kind == "page" && t.url.starts_with(&want))
                .await
                .context("the approval window did not open")?;
            let attempt = async {
                let s = self.cdp.attach(&t.target_id).await?;
                s.call("Page.enable", serde_json::json!({})).await?;
                Ok::<_, anyhow::Error>(s)
            };
            match tokio::time::timeout(Duration::from_secs(3), attempt).await {
                Ok(Ok(s)) => return Ok(s),
                _ if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(150)).await;
                }
                Ok(Err(e)) => return Err(e.context("the approval window did not answer")),
                Err(_) => return Err(anyhow!("the approval window did not answer within {within:?}")),
            }
        }
    }

    /// The first request not in `seen` that any open approval window
    /// lists, with that window (`None` when none does yet). Every window is
    /// looked at: one whose last request was just decided can still be
    /// listed, first, while the next request opens in another.
    pub async fn unseen_request(&self, seen: &std::collections::HashSet<u64>) -> Option<(CdpSession, ShownRequest)> {
        let want = approval_url();
        let targets = self.cdp.targets().await.ok()?;
        for t in targets.iter().filter(|t| t.kind == "page" && t.url.starts_with(&want)) {
            let Ok(page) = self.cdp.attach(&t.target_id).await else { continue };
            // A window closing as it is read may never answer.
            let read = page.evaluate(
                "[...document.querySelectorAll('section.request')].map(c => [c.dataset.request, c.textContent])",
            );
            let Ok(Ok(v)) = tokio::time::timeout(Duration::from_secs(3), read).await else {
                continue;
            };
            for card in v.as_array().into_iter().flatten() {
                let Some(id) = card.get(0).and_then(Value::as_str).and_then(|s| s.parse::<u64>().ok()) else {
                    continue;
                };
                if !seen.contains(&id) {
                    let text = card.get(1).and_then(Value::as_str).unwrap_or_default().to_string();
                    return Some((page, ShownRequest { request: id, text }));
                }
            }
        }
        None
    }

    /// Waits up to `within` for a request not in `seen` ([`Human::unseen_request`])
    /// and adds it to `seen`.
    pub async fn new_request(
        &self,
        seen: &mut std::collections::HashSet<u64>,
        within: Duration,
    ) -> Option<(CdpSession, ShownRequest)> {
        let found = crate::poll(within, Duration::from_millis(150), || self.unseen_request(seen)).await;
        if let Some((_, shown)) = &found {
            seen.insert(shown.request);
        }
        found
    }

    /// Whether an approval window is open now.
    pub async fn approval_window_open(&self) -> bool {
        let want = approval_url();
        self.cdp
            .targets()
            .await
            .map(|ts| ts.iter().any(|t| t.kind == "page" && t.url.starts_with(&want)))
            .unwrap_or(false)
    }

    /// Waits until `page` (approval window or popup) lists a request.
    pub async fn wait_for_request(&self, page: &CdpSession, within: Duration) -> Result<ShownRequest> {
        let found = crate::poll(within, Duration::from_millis(100), || async {
            // Bounded: a window that closes as it is read never answers.
            let read = page.evaluate(
                "(() => { const c = document.querySelector('section.request'); \
                 return c ? [c.dataset.request, c.textContent] : null; })()",
            );
            let v = tokio::time::timeout(Duration::from_secs(3), read).await.ok()?.ok()?;
            let id = v.get(0)?.as_str()?.parse::<u64>().ok()?;
            Some(ShownRequest { request: id, text: v.get(1)?.as_str().unwrap_or_default().to_string() })
        })
        .await;
        found.ok_or_else(|| anyhow!("no request was shown within {within:?}"))
    }

    /// Ids of the requests `page` lists now.
    pub async fn shown_requests(&self, page: &CdpSession) -> Vec<u64> {
        let v = page
            .evaluate("[...document.querySelectorAll('section.request')].map(c => c.dataset.request)")
            .await
            .unwrap_or(Value::Null);
        v.as_array().map(|a| a.iter().filter_map(|x| x.as_str()?.parse().ok()).collect()).unwrap_or_default()
    }

    /// Waits for the approval window and its first request.
    pub async fn next_request(&self, within: Duration) -> Result<(CdpSession, ShownRequest)> {
        // The window found may be one that is closing (its last request
        // just decided) while the next request opens a new one: look again
        // every few seconds instead of waiting on a window that is gone.
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let page = self.approval_window(left).await?;
            match self.wait_for_request(&page, left.min(Duration::from_secs(3))).await {
                Ok(r) => return Ok((page, r)),
                Err(_) if std::time::Instant::now() < deadline => continue,
                Err(_) => return Err(anyhow!("no request was shown within {within:?}")),
            }
        }
    }

    pub async fn approve(&self, page: &CdpSession, request: u64) -> Result<()> {
        self.answer(page, &format!("#approve-{request}")).await
    }

    pub async fn deny(&self, page: &CdpSession, request: u64) -> Result<()> {
        self.answer(page, &format!("#deny-{request}")).await
    }

    /// Clicks a request's button in the window it was read in or, when that
    /// window was the previous one closing (it may draw the next request
    /// just before it goes, while a new window opens), in the approval
    /// window that replaced it: the person clicks the window that stays.
    async fn answer(&self, page: &CdpSession, selector: &str) -> Result<()> {
        if page.click_selector_within(selector, Duration::from_secs(3)).await.is_ok() {
            return Ok(());
        }
        let want = approval_url();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            let windows =
                self.cdp.targets().await?.into_iter().filter(|t| t.kind == "page" && t.url.starts_with(&want));
            for t in windows {
                let Ok(Ok(w)) = tokio::time::timeout(Duration::from_secs(3), self.cdp.attach(&t.target_id)).await
                else {
                    continue;
                };
                if w.click_selector_within(selector, Duration::from_secs(3)).await.is_ok() {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        bail!("no approval window shows {selector}")
    }

    /// Runs `call` (an MCP call), approving in the extension's window every
    /// request it shows until the call returns. Returns its output and the
    /// requests shown, in order.
    pub async fn approving<F: Future>(&self, call: F) -> (F::Output, Vec<ShownRequest>) {
        let mut call = std::pin::pin!(call);
        let mut shown = Vec::new();
        loop {
            let approve = async {
                match self.next_request(Duration::from_secs(60)).await {
                    Ok((win, req)) => {
                        self.approve(&win, req.request).await.expect("click Approve");
                        Some(req)
                    }
                    Err(_) => None,
                }
            };
            tokio::select! {
                r = &mut call => return (r, shown),
                req = approve => {
                    if let Some(req) = req {
                        // The window drops an answered request; wait for that so the
                        // same card is not clicked twice.
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        shown.push(req);
                    }
                }
            }
        }
    }

    /// The popup in a tab (opened once).
    pub async fn popup(&mut self) -> Result<CdpSession> {
        self.open_popup(false).await
    }

    /// The popup in a window of its own (opened once), as the person has
    /// it while the extension brings the tab that needs them to the front.
    pub async fn popup_window(&mut self) -> Result<CdpSession> {
        self.open_popup(true).await
    }

    async fn open_popup(&mut self, own_window: bool) -> Result<CdpSession> {
        if let Some(p) = &self.popup {
            return Ok(p.clone());
        }
        let p = if own_window {
            self.cdp.new_window_page(&popup_url()).await?
        } else {
            self.cdp.new_page(&popup_url()).await?
        };
        // Wait until the Rust side has rendered the controls.
        crate::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
            let v = p.evaluate("document.getElementById('control-state').textContent").await.ok()?;
            v.as_str().filter(|t| *t != "Running").map(|_| ())
        })
        .await;
        self.popup = Some(p.clone());
        Ok(p)
    }

    /// Waits until the popup shows a hand-off card, other than `not`;
    /// its id and whole text.
    pub async fn wait_handoff(&mut self, within: Duration, not: Option<u64>) -> Result<(u64, String)> {
        let p = self.popup().await?;
        let skip = not.map_or(-1.0, |n| n as f64);
        let found = crate::poll(within, Duration::from_millis(100), || async {
            let v = p
                .evaluate(&format!(
                    "(() => {{ const c = [...document.querySelectorAll('[data-handoff]')].find(c => Number(c.dataset.handoff) !== {skip}); return c ? [Number(c.dataset.handoff), c.textContent] : null; }})()"
                ))
                .await
                .ok()?;
            Some((v[0].as_u64()?, v[1].as_str()?.to_string()))
        })
        .await;
        found.ok_or_else(|| anyhow!("the popup showed no hand-off within {within:?}"))
    }

    /// The text of hand-off card `id` (empty when it is gone).
    pub async fn handoff_text(&mut self, id: u64) -> Result<String> {
        let p = self.popup().await?;
        let v = p.evaluate(&format!("document.getElementById('handoff-{id}')?.textContent ?? ''")).await?;
        Ok(v.as_str().unwrap_or_default().to_string())
    }

    /// Presses Done (`done`) or Abort on hand-off card `id`.
    pub async fn hand_back(&mut self, id: u64, done: bool) -> Result<()> {
        let p = self.popup().await?;
        p.click_selector(&format!("#handoff-{}-{id}", if done { "done" } else { "abort" })).await
    }

    /// Clicks a control in the popup (`stop`, `pause`, `resume`, `yolo`, `chime`…).
    pub async fn click_in_popup(&mut self, id: &str) -> Result<()> {
        let p = self.popup().await?;
        p.click_selector(&format!("#{id}")).await
    }

    /// The popup's control line (`STOPPED: …`, `Paused: …`, `Running: …`).
    pub async fn popup_control_state(&mut self) -> Result<String> {
        let p = self.popup().await?;
        let v = p.evaluate("document.getElementById('control-state').textContent").await?;
        Ok(v.as_str().unwrap_or_default().to_string())
    }

    /// Waits until the popup's control line starts with `prefix`.
    pub async fn wait_popup_state(&mut self, prefix: &str) -> Result<()> {
        let p = self.popup().await?;
        let ok = crate::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
            let v = p.evaluate("document.getElementById('control-state').textContent").await.ok()?;
            v.as_str().filter(|t| t.starts_with(prefix)).map(|_| ())
        })
        .await;
        ok.ok_or_else(|| anyhow!("the popup never showed {prefix:?}"))
    }

    /// Closes the popup's tab (if open) and opens the popup again, as the
    /// person does when they click the toolbar icon a second time.
    pub async fn reopen_popup(&mut self) -> Result<CdpSession> {
        if let Some(p) = self.popup.take() {
            self.cdp.close_target(&p.target_id).await?;
        }
        self.popup().await
    }

    /// Switches "Record me" on in the popup, names the flow, sets "Also
    /// keep the text I type" and presses Start recording; waits until the
    /// worker says it records.
    pub async fn start_recording(&mut self, name: &str, keep_text: bool) -> Result<()> {
        let p = self.popup().await?;
        p.click_selector("#record").await?;
        p.click_and_type("#record-name", name).await?;
        let kept = p.evaluate("document.getElementById('record-keep-text').checked").await?;
        if kept.as_bool() != Some(keep_text) {
            p.click_selector("#record-keep-text").await?;
        }
        p.click_selector("#record-start").await?;
        let on = crate::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
            self.record_state().await.ok().filter(|s| s["on"] == true)
        })
        .await;
        match on {
            Some(_) => Ok(()),
            None => {
                let status = p.evaluate("document.getElementById('record-status').textContent").await?;
                Err(anyhow!("recording did not start: {status}"))
            }
        }
    }

    /// Switches "Record me" off in the popup.
    pub async fn stop_recording(&mut self) -> Result<()> {
        let p = self.popup().await?;
        p.click_selector("#record").await?;
        let off = crate::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
            self.record_state().await.ok().filter(|s| s["on"] != true)
        })
        .await;
        off.map(|_| ()).ok_or_else(|| anyhow!("recording did not stop"))
    }

    /// What the worker publishes about the recording (`on`, `name`,
    /// `keep_text`, `steps`, `armed`), as the popup reads it.
    pub async fn record_state(&self) -> Result<Value> {
        let p = self.popup.as_ref().ok_or_else(|| anyhow!("the popup is not open"))?;
        p.evaluate("chrome.storage.session.get('record').then(r => r.record || {})").await
    }

    /// Waits until the worker has armed more than `before` pages: the
    /// page just loaded records what the person does next.
    pub async fn wait_armed(&self, before: u64) -> Result<u64> {
        let armed = crate::poll(Duration::from_secs(10), Duration::from_millis(50), || async {
            self.record_state().await.ok()?["armed"].as_u64().filter(|a| *a > before)
        })
        .await;
        armed.ok_or_else(|| anyhow!("no page was armed for recording after {before}"))
    }

    /// The toolbar badge as the person sees it: its text and its
    /// background colour (`[r, g, b, a]`), read from the popup page.
    pub async fn badge(&mut self) -> Result<(String, Vec<u8>)> {
        let p = self.popup().await?;
        let v = p
            .evaluate(
                "Promise.all([chrome.action.getBadgeText({}), chrome.action.getBadgeBackgroundColor({})])\
                 .then(([t, c]) => [t, [...c]])",
            )
            .await?;
        let text = v[0].as_str().unwrap_or_default().to_string();
        let color = v[1].as_array().map(|a| a.iter().filter_map(|x| x.as_u64().map(|n| n as u8)).collect());
        Ok((text, color.unwrap_or_default()))
    }

    /// Waits until the badge text is `text`.
    pub async fn wait_badge(&mut self, text: &str) -> Result<Vec<u8>> {
        let within = Duration::from_secs(10);
        let start = std::time::Instant::now();
        loop {
            let (now, color) = self.badge().await?;
            if now == text {
                return Ok(color);
            }
            if start.elapsed() >= within {
                return Err(anyhow!("the badge shows {now:?}, not {text:?}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The popup's second-browser warning as the person reads it; `None`
    /// while it is hidden.
    pub async fn popup_refusal_warning(&mut self) -> Result<Option<String>> {
        let p = self.popup().await?;
        let v = p
            .evaluate(
                "(() => { const b = document.getElementById('refusals'); \
                 return b && !b.hidden ? document.getElementById('refusals-text').textContent : null; })()",
            )
            .await?;
        Ok(v.as_str().map(str::to_string))
    }

    /// Waits (≤ `within`) until the popup's second-browser warning says `text`.
    pub async fn wait_popup_refusal(&mut self, text: &str, within: Duration) -> Result<String> {
        let start = std::time::Instant::now();
        loop {
            let now = self.popup_refusal_warning().await?;
            if let Some(w) = now.as_ref().filter(|w| w.contains(text)) {
                return Ok(w.clone());
            }
            if start.elapsed() >= within {
                return Err(anyhow!("the popup's warning is {now:?}, without {text:?}"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The approval history as the popup exports it.
    pub async fn history(&mut self) -> Result<Vec<Value>> {
        let p = self.popup().await?;
        let v = p.evaluate("chrome.storage.local.get('history').then(i => JSON.stringify(i.history || []))").await?;
        Ok(serde_json::from_str(v.as_str().unwrap_or("[]"))?)
    }
}
