#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The server end to end: a vfio-user client (the `vfio_user` crate's
//! own, standing for QEMU) connects over a Unix socket and reads the
//! model as amdgpu's probe does.

use barebell_vfio_peer::trace::Trace;
use barebell_vfio_peer::{ModelFunction, Options};
use std::path::PathBuf;
use vfio_bindings::bindings::vfio::{
    VFIO_PCI_BAR0_REGION_INDEX, VFIO_PCI_BAR5_REGION_INDEX, VFIO_PCI_CONFIG_REGION_INDEX,
    VFIO_PCI_ROM_REGION_INDEX, VFIO_REGION_INFO_FLAG_MMAP,
};

/// `amdgpu_discovery.c`'s register offsets (dwords) and the table's
/// place (`DISCOVERY_TMR_OFFSET` below the top of VRAM) and signature
/// (`BINARY_SIGNATURE`, `include/discovery.h`).
const MM_CONFIG_MEMSIZE: u64 = 0xde3;
const MM_INDEX: u64 = 0x0;
const MM_INDEX_HI: u64 = 0x6;
const MM_DATA: u64 = 0x1;
const DISCOVERY_TMR_OFFSET: u64 = 64 << 10;
const BINARY_SIGNATURE: u32 = 0x2821_1407;

fn socket(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("bb-vfio-{name}-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

fn serve(part: &str, path: &std::path::Path, trace: Trace) -> std::thread::JoinHandle<u64> {
    let opts = Options {
        part: part.into(),
        bar0_mib: 256,
        seed: 1,
    };
    let mut f = ModelFunction::new(&opts, trace).expect("the model builds the part");
    let server =
        vfio_user::Server::new(path, false, ModelFunction::irqs(), f.regions()).expect("listen");
    std::thread::spawn(move || {
        server.run(&mut f).expect("serves until the client goes");
        f.counts().reg_reads
    })
}

fn read32(c: &mut vfio_user::Client, region: u32, offset: u64) -> u32 {
    let mut b = [0u8; 4];
    c.region_read(region, offset, &mut b).expect("region read");
    u32::from_le_bytes(b)
}

fn write32(c: &mut vfio_user::Client, region: u32, offset: u64, v: u32) {
    c.region_write(region, offset, &v.to_le_bytes())
        .expect("region write");
}

/// As `amdgpu_discovery_read_binary_from_mem()`: VRAM size from
/// `RCC_CONFIG_MEMSIZE`, then the table's first dword through
/// `MM_INDEX`/`MM_INDEX_HI`/`MM_DATA` (`amdgpu_device_mm_access()`).
fn discovery_signature(c: &mut vfio_user::Client) -> (u64, u32) {
    let vram_mib = read32(c, VFIO_PCI_BAR5_REGION_INDEX, MM_CONFIG_MEMSIZE * 4);
    let pos = (u64::from(vram_mib) << 20) - DISCOVERY_TMR_OFFSET;
    write32(
        c,
        VFIO_PCI_BAR5_REGION_INDEX,
        MM_INDEX * 4,
        (pos as u32) | 0x8000_0000,
    );
    write32(
        c,
        VFIO_PCI_BAR5_REGION_INDEX,
        MM_INDEX_HI * 4,
        (pos >> 31) as u32,
    );
    (
        u64::from(vram_mib),
        read32(c, VFIO_PCI_BAR5_REGION_INDEX, MM_DATA * 4),
    )
}

#[test]
fn a_client_reads_ids_and_the_discovery_table_as_amdgpu_probes() {
    let path = socket("navi31");
    let trace_path = path.with_extension("trace");
    let server = serve("navi31", &path, Trace::to_file(&trace_path).unwrap());
    let mut c = vfio_user::Client::new(&path).expect("connect");
    // QEMU maps BAR0 from the fd the region table carries.
    let bar0 = c.region(VFIO_PCI_BAR0_REGION_INDEX).expect("BAR0");
    assert_eq!(bar0.size, 256 << 20);
    assert!(bar0.flags & VFIO_REGION_INFO_FLAG_MMAP != 0);
    assert!(bar0.file_offset.is_some(), "BAR0 comes with the VRAM fd");
    assert_eq!(
        read32(&mut c, VFIO_PCI_CONFIG_REGION_INDEX, 0),
        0x744C_1002,
        "AMD's vendor id and the RX 7900 XTX's device id"
    );
    assert_eq!(
        read32(&mut c, VFIO_PCI_CONFIG_REGION_INDEX, 8) >> 8,
        0x03_0000
    );
    let (vram_mib, signature) = discovery_signature(&mut c);
    assert_eq!(vram_mib, 24 * 1024, "the navi31 model's 24 GiB");
    assert_eq!(signature, BINARY_SIGNATURE);
    // The expansion ROM: 0xAA55 and "ATOM" at the header 0x48 names.
    let mut rom = vec![0u8; 4096];
    c.region_read(VFIO_PCI_ROM_REGION_INDEX, 0, &mut rom)
        .expect("ROM read");
    assert_eq!(&rom[..2], &[0x55, 0xAA]);
    let hdr = usize::from(u16::from_le_bytes([rom[0x48], rom[0x49]]));
    assert_eq!(&rom[hdr + 4..hdr + 8], b"ATOM");
    // The posted flag amdgpu_atombios_scratch_need_asic_init() reads, in
    // BIOS_SCRATCH_7 (NBIO segment 1 at dword 0x14 on the model's navi31,
    // + 0x38 + 7), bit 9 (ATOM_S7_ASIC_INIT_COMPLETE_MASK).
    let s7 = read32(&mut c, VFIO_PCI_BAR5_REGION_INDEX, (0x14 + 0x38 + 7) * 4);
    assert_eq!(s7 & 0x200, 0x200, "{s7:#x}");
    // A doorbell of a width the model does not take (it takes aligned
    // 32- and 64-bit stores) is a posted store that goes nowhere: no
    // error reaches the client, the trace records it.
    c.region_write(2, 0, &[1, 0]).expect("posted");
    c.shutdown().unwrap();
    drop(c);
    let reads = server.join().expect("the server thread");
    assert!(reads >= 2, "{reads} register reads");
    let trace = std::fs::read_to_string(&trace_path).unwrap();
    std::fs::remove_file(&trace_path).unwrap();
    assert!(trace.starts_with("R 0x378c 0x6000\n"), "{trace}");
    assert!(trace.contains("! doorbell store of 2 bytes"), "{trace}");
}

#[test]
fn mi300x_serves_its_discovery_table_too() {
    let path = socket("mi300x");
    let server = serve("mi300x", &path, Trace::none());
    let mut c = vfio_user::Client::new(&path).expect("connect");
    assert_eq!(read32(&mut c, VFIO_PCI_CONFIG_REGION_INDEX, 0), 0x74A1_1002);
    let (_, signature) = discovery_signature(&mut c);
    assert_eq!(signature, BINARY_SIGNATURE);
    c.shutdown().unwrap();
    drop(c);
    server.join().expect("the server thread");
}
