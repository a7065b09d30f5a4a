//! The discovery parser on arbitrary bytes. The first byte chooses
//! whether the model's checksum writer fixes the checksums first: without
//! it almost every mutation dies at the binary checksum, with it the
//! fuzzer reaches the die and IP walk. A panic, overflow trap or
//! out-of-bounds access is a finding; so is a parse that succeeds and
//! then reports an IP entry whose walk disagrees with `ip_count`.
#![no_main]

use barebell::discovery::Discovery;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = rest.to_vec();
    if mode & 1 == 1 {
        barebell_model::discovery::refresh_checksums(&mut bytes);
    }
    let Ok(d) = Discovery::parse(&bytes) else {
        return;
    };
    let mut n = 0;
    d.for_each_ip(|ip| {
        n += 1;
        let _ = d.ip(ip.hw_id, ip.instance);
    });
    assert_eq!(n, d.ip_count());
    let _ = d.gc_info();
    d.for_each_harvested(|_, _| {});
});
