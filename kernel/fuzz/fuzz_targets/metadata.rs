//! Any byte string as the descriptor of an NT_AMDGPU_METADATA note: the
//! msgpack tree and the metadata checks must return a value or a typed
//! error, in time and memory bounded by the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = barebell_kernel::msgpack::decode(data);
    let _ = barebell_kernel::metadata::parse(data);
});
