//! Recordings from the extension's "Record me" switch (docs/design.md,
//! "Recording and flows"): the frames `RecordStart`, `Recorded` and
//! `RecordStop` of the `/ext` socket, assembled by the pure
//! `shared::record::Recording` and saved to the flow store.
//!
//! - One recording at a time, kept across reconnects of the extension (a
//!   worker restart does not lose it); a new `RecordStart` saves the one
//!   before it first.
//! - Each `Recorded` step is checked again here: bounds, URL, and the
//!   sensitive-field rule (a typed value for a field the bridge finds
//!   sensitive is dropped whatever the extension said). A malformed step
//!   counts as an invalid frame: a connection that sends
//!   `MAX_INVALID_FRAMES` of them is closed (`ext.rs`).
//! - Steps from the agent's own tabs are not the person's: ignored.
//! - `RecordStop` saves the flow (`FlowStore::save`) under its name, or
//!   the name with ` 2`, ` 3`… when a flow of that name exists. Logs name
//!   the flow and count steps and parameters; never a value.

use std::sync::Mutex;

use shared::protocol::TabId;
use shared::record::{PushError, RecordedStep, Recording};

use super::AppState;

/// The recording in progress, if any.
#[derive(Default)]
pub(crate) struct Recorder {
    current: Mutex<Option<Recording>>,
}

impl Recorder {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Recording>> {
        self.current.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl AppState {
    /// `RecordStart`: `false` (an invalid frame) for a bad flow name.
    pub(crate) fn record_start(&self, name: &str, keep_text: bool) -> bool {
        let Ok(recording) = Recording::new(name, keep_text) else {
            tracing::debug!("RecordStart with an invalid flow name");
            return false;
        };
        let previous = self.inner.recorder.lock().replace(recording);
        tracing::info!(flow = name, keep_text, "recording started");
        if let Some(previous) = previous {
            self.spawn_save(previous);
        }
        true
    }

    /// `Recorded`: `false` (an invalid frame) for a malformed step.
    pub(crate) fn record_step(&self, tab: TabId, step: RecordedStep) -> bool {
        if self.registry().is_agent_tab(tab) {
            tracing::debug!(tab, "recorded step from an agent tab ignored");
            return true;
        }
        let mut guard = self.inner.recorder.lock();
        let Some(recording) = guard.as_mut() else {
            tracing::debug!(tab, "recorded step with no recording on");
            return true;
        };
        match recording.push(step) {
            Ok(()) => true,
            Err(PushError::Full) => {
                tracing::warn!(flow = recording.name(), "recording is full: step dropped");
                true
            }
            Err(PushError::Malformed(why)) => {
                tracing::debug!(flow = recording.name(), why, "malformed recorded step");
                false
            }
        }
    }

    /// `RecordStop`: saves the recording, from its own task.
    pub(crate) fn record_stop(&self) {
        let recording = self.inner.recorder.lock().take();
        match recording {
            Some(r) => self.spawn_save(r),
            None => tracing::debug!("RecordStop with no recording on"),
        }
    }

    fn spawn_save(&self, recording: Recording) {
        let store = self.config().flows.clone();
        self.inner.tracker.spawn(async move {
            let name = recording.name().to_string();
            let Some(flow) = recording.finish(crate::time::now_rfc3339()) else {
                tracing::info!(flow = name, "recording stopped with no step: nothing saved");
                return;
            };
            let Some(store) = store else {
                tracing::warn!(flow = name, "no flow store: recording dropped");
                return;
            };
            let saved = tokio::task::spawn_blocking(move || save_unique(&store, flow)).await;
            match saved {
                Ok(Ok((name, steps, params))) => tracing::info!(flow = name, steps, params, "flow saved"),
                Ok(Err(e)) => tracing::warn!(flow = name, error = %e, "flow not saved"),
                Err(e) => tracing::warn!(flow = name, error = %e, "flow save task failed"),
            }
        });
    }
}

/// Saves `flow` under its name or the first free `NAME 2`, `NAME 3`…;
/// returns the name used and the counts.
fn save_unique(
    store: &crate::flows::FlowStore,
    mut flow: shared::flow::Flow,
) -> Result<(String, usize, usize), crate::Error> {
    let base = flow.name.clone();
    for n in 1..=100u32 {
        if n > 1 {
            let suffix = format!(" {n}");
            let keep = shared::flow::MAX_FLOW_NAME_CHARS - suffix.len();
            flow.name = format!("{}{suffix}", base.chars().take(keep).collect::<String>().trim_end());
        }
        match store.save(&flow, false) {
            Ok(()) => return Ok((flow.name.clone(), flow.steps.len(), flow.params.len())),
            Err(crate::Error::FlowExists(_)) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(crate::Error::FlowExists(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_a_number() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::flows::FlowStore::open(&dir.path().join("chaperone.db")).unwrap();
        let mut r = Recording::new("shop", false).unwrap();
        r.push(RecordedStep {
            action: shared::record::RecordedAction::Navigate { url: "https://shop.example/".into() },
            target: None,
            autocomplete: String::new(),
            sensitive: false,
            url: "https://shop.example/".into(),
            title: String::new(),
        })
        .unwrap();
        let flow = r.finish("2026-12-01T21:00:00Z".into()).unwrap();
        assert_eq!(save_unique(&store, flow.clone()).unwrap().0, "shop");
        assert_eq!(save_unique(&store, flow.clone()).unwrap().0, "shop 2");
        assert_eq!(save_unique(&store, flow).unwrap().0, "shop 3");
    }
}
