//! `config.toml` as `chaperone serve` reads it (`FileConfig::parse`), and
//! everything the daemon derives from a parsed file: no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(c) = bridge::config::FileConfig::parse(text) {
        let _ = c.policy();
        let _ = c.bind_ip();
        let _ = c.extension_origins();
        let _ = c.files(std::path::PathBuf::from("/tmp/chaperone-fuzz-downloads"));
        let _ = c.human_timeout_secs();
        let _ = c.retention_days();
    }
});
