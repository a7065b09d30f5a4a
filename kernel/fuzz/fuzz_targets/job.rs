//! `barebell run JOB.json`'s job parser on arbitrary text: `Job::parse`
//! returns a job or a typed `JobError`, and a parsed job's buffers,
//! launch arguments and result decoding never panic. A parsed job stays
//! within the job limits (`MAX_JOB_BYTES`); its buffers are built only
//! when small, so a job that asks for a gigabyte does not swamp the
//! fuzzer.
#![no_main]

use barebell_kernel::job::{Job, MAX_JOB_BYTES};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(job) = Job::parse(text) else {
        return;
    };
    let total = job.total_bytes();
    assert!(total <= MAX_JOB_BYTES, "{total} bytes passed the parser");
    let mut addresses = BTreeMap::new();
    for (i, name) in job.buffers.keys().enumerate() {
        addresses.insert(name.clone(), 0x1_0000_0000 + ((i as u64) << 20));
    }
    let _ = job.launch_args(&addresses);
    if total <= 1 << 16 {
        for name in job.buffers.keys() {
            let Some(bytes) = job.buffer_bytes(name) else {
                panic!("buffer {name} has no bytes");
            };
            let _ = job.decode_buffer(name, &bytes);
        }
    }
});
