//! The native-messaging reader (`bridge::native_host::read_request`):
//! any bytes on stdin, length prefix included, give a request or an error
//! message, never a panic or an allocation past the 64 KiB limit.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    let _ = bridge::native_host::read_request(&mut input);
});
