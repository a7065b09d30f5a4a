//! Loading an AMDHSA code object into device-visible memory.
//!
//! Two steps, in the order ROCR's loader takes them
//! (`ExecutableImpl::LoadCodeObject` → `LoadSegments` → `ApplyRelocations`
//! in `loader/executable.cpp`):
//!
//! 1. [`CodeObject::parse`] reads and checks everything once: the ELF
//!    header (64-bit little-endian, `EM_AMDGPU`, OS ABI HSA, ABI version
//!    v4/v5/v6, `ET_DYN`), the `PT_LOAD` segments, the metadata note, each
//!    kernel's `.kd` symbol and its descriptor, and the dynamic relocations.
//!    Nothing is written; every offset is bounds-checked against the file.
//! 2. [`CodeObject::load`] checks the code object against a [`Part`], then
//!    copies the segments into memory the caller provides (a host view of
//!    device memory plus the device address it appears at), zero-fills
//!    their tails, and applies the relocations for that device address.
//!
//! The whole image is one block, as ROCR allocates it: it spans from the
//! lowest `p_vaddr` to the highest `p_vaddr + p_memsz`, and the device
//! address must be aligned to the largest `p_align`.

use crate::descriptor::{DESCRIPTOR_ALIGN, DESCRIPTOR_SIZE, ENTRY_ALIGN, KernelDescriptor};
use crate::layout::ArgLayout;
use crate::metadata::{self, KernelMeta, Metadata, MetadataError};
use crate::target::{
    CodeObjectVersion, CodeTarget, ELF_H, ELFOSABI_AMDGPU_HSA, EM_AMDGPU, NT_AMDGPU_METADATA, Part,
    TargetMismatch,
};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use barebell_facts::Fact;
use object::LittleEndian as LE;
use object::elf::{self, FileHeader64};
use object::read::elf::{
    FileHeader, ProgramHeader, Rela, SectionHeader, SectionTable, Sym, SymbolTable,
};

/// The largest `p_align` the loader takes: 2 MiB, a huge page. lld aligns
/// AMDGPU segments to 4 KiB pages; a larger value is a hostile or broken
/// file (the image is placed at that alignment in real memory).
pub const MAX_SEGMENT_ALIGN: u64 = 2 << 20;

/// The largest image (first segment's start to last segment's end) the
/// loader takes: 1 GiB. The image is allocated whole before loading.
pub const MAX_IMAGE_BYTES: u64 = 1 << 30;

/// `R_AMDGPU_NONE`.
pub const R_AMDGPU_NONE: u32 = 0;
/// `R_AMDGPU_ABS32_LO`: low 32 bits of S + A.
pub const R_AMDGPU_ABS32_LO: u32 = 1;
/// `R_AMDGPU_ABS32_HI`: high 32 bits of S + A.
pub const R_AMDGPU_ABS32_HI: u32 = 2;
/// `R_AMDGPU_ABS64`: S + A.
pub const R_AMDGPU_ABS64: u32 = 3;
/// `R_AMDGPU_ABS32`: S + A, 32 bits.
pub const R_AMDGPU_ABS32: u32 = 6;
/// `R_AMDGPU_RELATIVE64`: B + A.
pub const R_AMDGPU_RELATIVE64: u32 = 13;

/// Note owner of the metadata note ("AMDGPU", NUL-terminated in the file).
const NOTE_OWNER: &[u8] = b"AMDGPU";

/// Why a code object could not be parsed or loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// Not an ELF file at all.
    NotElf,
    /// ELF, but not 64-bit little-endian.
    NotElf64Le,
    /// `e_machine` is not `EM_AMDGPU`.
    WrongMachine(u16),
    /// `EI_OSABI` is not `ELFOSABI_AMDGPU_HSA` (PAL and Mesa objects).
    WrongOsAbi(u8),
    /// `EI_ABIVERSION` names a code object version other than v4/v5/v6.
    UnsupportedVersion(u8),
    /// `e_type` is not `ET_DYN` (a relocatable `.o`, say).
    NotSharedObject(u16),
    /// The `object` crate refused a structure (offsets past the end, bad
    /// sizes); it describes which.
    Elf(object::read::Error),
    /// A `PT_LOAD` segment that cannot be loaded.
    Segment {
        index: usize,
        why: &'static str,
    },
    /// No `PT_LOAD` segment.
    NoSegments,
    /// No `NT_AMDGPU_METADATA` note.
    NoMetadata,
    /// More than one metadata note.
    DuplicateMetadata,
    Metadata(MetadataError),
    /// A kernel's `.kd` symbol is not in the symbol table.
    MissingDescriptor {
        kernel: String,
        symbol: String,
    },
    /// A descriptor that is not 64 file-backed, 64-byte-aligned bytes of a
    /// loaded segment.
    BadDescriptor {
        kernel: String,
        why: &'static str,
    },
    /// The descriptor's code entry is outside executable code or misaligned.
    BadEntry {
        kernel: String,
        offset: i64,
    },
    /// The descriptor and the metadata disagree about a size.
    DescriptorDisagrees {
        kernel: String,
        field: &'static str,
        descriptor: u32,
        metadata: u32,
    },
    /// A dynamic relocation that cannot be applied.
    Relocation {
        index: usize,
        why: RelocProblem,
    },
    /// The code object does not fit the part.
    Target(TargetMismatch),
    /// The caller's memory is smaller than the image.
    ImageTooSmall {
        needed: u64,
        given: u64,
    },
    /// The device address is not aligned to the largest `p_align`.
    MisalignedBase {
        address: u64,
        align: u64,
    },
    /// The image would wrap the 64-bit address space at that address.
    AddressOverflow {
        address: u64,
        size: u64,
    },
    /// No kernel of that name in the code object.
    NoSuchKernel {
        name: String,
    },
}

/// What is wrong with one relocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelocProblem {
    /// A type that only a static link resolves (PC-relative, GOT).
    UnsupportedType(u32),
    /// A relocation against a symbol the object does not define; barebell
    /// has no agent-defined globals to bind it to.
    UndefinedSymbol(String),
    /// The symbol index is out of range, or the table is malformed.
    BadSymbol(u32),
    /// The patched bytes would fall outside the image.
    OutsideImage { offset: u64 },
    /// `SHT_REL` relocations (no addend), which AMDGPU objects never use.
    RelWithoutAddend,
}

impl core::fmt::Display for LoadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LoadError::NotElf => f.write_str("not an ELF file"),
            LoadError::NotElf64Le => f.write_str("not a 64-bit little-endian ELF file"),
            LoadError::WrongMachine(m) => {
                write!(f, "ELF machine {m} is not EM_AMDGPU ({EM_AMDGPU})")
            }
            LoadError::WrongOsAbi(a) => write!(
                f,
                "ELF OS ABI {a} is not AMDGPU HSA ({ELFOSABI_AMDGPU_HSA}): not an AMDHSA code object"
            ),
            LoadError::UnsupportedVersion(v) => write!(
                f,
                "ELF ABI version {v} is not code object v4, v5 or v6 (ABI versions 2-4)"
            ),
            LoadError::NotSharedObject(t) => write!(
                f,
                "ELF type {t} is not a shared object (ET_DYN): link the code object with ld.lld"
            ),
            LoadError::Elf(why) => write!(f, "malformed ELF: {why}"),
            LoadError::Segment { index, why } => write!(f, "program header {index}: {why}"),
            LoadError::NoSegments => f.write_str("no PT_LOAD segment"),
            LoadError::NoMetadata => f.write_str("no NT_AMDGPU_METADATA note"),
            LoadError::DuplicateMetadata => f.write_str("more than one NT_AMDGPU_METADATA note"),
            LoadError::Metadata(e) => write!(f, "{e}"),
            LoadError::MissingDescriptor { kernel, symbol } => write!(
                f,
                "kernel {kernel}: descriptor symbol {symbol} is not in the symbol table"
            ),
            LoadError::BadDescriptor { kernel, why } => {
                write!(f, "kernel {kernel}: descriptor {why}")
            }
            LoadError::BadEntry { kernel, offset } => write!(
                f,
                "kernel {kernel}: code entry at descriptor{offset:+} is not 256-byte-aligned executable code"
            ),
            LoadError::DescriptorDisagrees {
                kernel,
                field,
                descriptor,
                metadata,
            } => write!(
                f,
                "kernel {kernel}: {field} is {descriptor} in the descriptor but {metadata} in the metadata"
            ),
            LoadError::Relocation { index, why } => {
                write!(f, "dynamic relocation {index}: ")?;
                match why {
                    RelocProblem::UnsupportedType(t) => write!(
                        f,
                        "type {t} is not one a loader applies (R_AMDGPU_ABS32_LO/HI, ABS32, ABS64, RELATIVE64)"
                    ),
                    RelocProblem::UndefinedSymbol(s) => {
                        write!(f, "symbol {s} is undefined and nothing defines it")
                    }
                    RelocProblem::BadSymbol(i) => write!(f, "symbol index {i} is invalid"),
                    RelocProblem::OutsideImage { offset } => {
                        write!(f, "target {offset:#x} is outside the loaded image")
                    }
                    RelocProblem::RelWithoutAddend => {
                        f.write_str("SHT_REL relocations are not used by AMDGPU")
                    }
                }
            }
            LoadError::Target(m) => write!(f, "{m}"),
            LoadError::ImageTooSmall { needed, given } => write!(
                f,
                "the code object needs {needed} bytes of device memory; {given} were given"
            ),
            LoadError::MisalignedBase { address, align } => write!(
                f,
                "load address {address:#x} is not aligned to the segments' {align}-byte alignment"
            ),
            LoadError::AddressOverflow { address, size } => write!(
                f,
                "an image of {size} bytes at {address:#x} wraps the address space"
            ),
            LoadError::NoSuchKernel { name } => {
                write!(f, "no kernel named {name} in the code object")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for LoadError {}

impl From<object::read::Error> for LoadError {
    fn from(e: object::read::Error) -> Self {
        LoadError::Elf(e)
    }
}

/// One `PT_LOAD` segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    pub file_offset: u64,
    pub filesz: u64,
    pub flags: u32,
}

impl Segment {
    fn contains(&self, vaddr: u64, len: u64, file_backed: bool) -> bool {
        let end = if file_backed { self.filesz } else { self.memsz };
        vaddr >= self.vaddr
            && vaddr
                .checked_add(len)
                .is_some_and(|e| e <= self.vaddr + end)
    }
}

/// How a relocation computes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RelocKind {
    Abs64,
    Abs32Lo,
    Abs32Hi,
    Abs32,
    Relative64,
}

/// A relocation, resolved as far as it can be without the load address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reloc {
    /// Offset of the patched bytes from the image start.
    at: u64,
    kind: RelocKind,
    /// For symbol relocations, the symbol's `st_value` (a vaddr).
    sym_vaddr: u64,
    addend: i64,
}

/// A kernel found in the code object, before loading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    pub meta: KernelMeta,
    pub descriptor: KernelDescriptor,
    /// The `.kd` symbol's vaddr.
    pub descriptor_vaddr: u64,
}

/// A parsed, checked, not yet loaded code object.
#[derive(Debug, Clone)]
pub struct CodeObject<'a> {
    data: &'a [u8],
    pub target: CodeTarget,
    pub metadata_version: [u64; 2],
    pub metadata_target: Option<String>,
    pub segments: Vec<Segment>,
    /// Lowest `p_vaddr`; image offset 0.
    pub base_vaddr: u64,
    /// Bytes from `base_vaddr` to the end of the highest segment.
    pub image_size: u64,
    /// Largest `p_align` (at least 1).
    pub image_align: u64,
    relocs: Vec<Reloc>,
    pub kernels: Vec<KernelInfo>,
}

type Hdr = FileHeader64<LE>;

type Phdr = elf::ProgramHeader64<LE>;

/// The ELF header, checked: 64-bit little-endian, `EM_AMDGPU`, OS ABI
/// HSA, ABI version v4/v5/v6, `ET_DYN`; and the target its flags name.
fn check_header(data: &[u8]) -> Result<(&Hdr, CodeTarget), LoadError> {
    let ident = data.get(..16).ok_or(LoadError::NotElf)?;
    if ident[..4] != elf::ELFMAG {
        return Err(LoadError::NotElf);
    }
    if ident[4] != elf::ELFCLASS64 || ident[5] != elf::ELFDATA2LSB {
        return Err(LoadError::NotElf64Le);
    }
    let hdr = Hdr::parse(data)?;
    let e = LE;
    if hdr.e_machine(e) != EM_AMDGPU {
        return Err(LoadError::WrongMachine(hdr.e_machine(e)));
    }
    if hdr.e_ident.os_abi != ELFOSABI_AMDGPU_HSA {
        return Err(LoadError::WrongOsAbi(hdr.e_ident.os_abi));
    }
    let version = CodeObjectVersion::from_abi_version(hdr.e_ident.abi_version)
        .ok_or(LoadError::UnsupportedVersion(hdr.e_ident.abi_version))?;
    if hdr.e_type(e) != elf::ET_DYN {
        return Err(LoadError::NotSharedObject(hdr.e_type(e)));
    }
    Ok((hdr, CodeTarget::from_flags(version, hdr.e_flags(e))))
}

/// What the program headers hold: the `PT_LOAD` segments and the metadata
/// note.
struct ProgramHeaders {
    segments: Vec<Segment>,
    meta: Option<Metadata>,
    /// Largest `p_align`, at least [`ENTRY_ALIGN`].
    image_align: u64,
    /// The program header index of the last PT_LOAD, for errors.
    last_load: usize,
}

/// Walks the program headers: each `PT_LOAD` checked
/// ([`check_segment`]), the metadata note of each `PT_NOTE` parsed
/// ([`metadata_notes`]).
fn program_headers(hdr: &Hdr, data: &[u8]) -> Result<ProgramHeaders, LoadError> {
    let e = LE;
    let mut segments: Vec<Segment> = Vec::new();
    let mut meta: Option<Metadata> = None;
    let mut image_align = ENTRY_ALIGN;
    let mut last_load = 0;
    for (index, ph) in hdr.program_headers(e, data)?.iter().enumerate() {
        match ph.p_type(e) {
            elf::PT_LOAD => {
                let (seg, align) = check_segment(ph, index, data, segments.last().copied())?;
                image_align = image_align.max(align);
                segments.push(seg);
                last_load = index;
            }
            elf::PT_NOTE => metadata_notes(ph, data, &mut meta)?,
            _ => {}
        }
    }
    Ok(ProgramHeaders {
        segments,
        meta,
        image_align,
        last_load,
    })
}

/// The `PT_LOAD` program header `index` as a [`Segment`], checked against
/// the file and the segment before it, and the alignment it asks (1 for
/// none).
fn check_segment(
    ph: &Phdr,
    index: usize,
    data: &[u8],
    prev: Option<Segment>,
) -> Result<(Segment, u64), LoadError> {
    let e = LE;
    let seg = Segment {
        vaddr: ph.p_vaddr(e),
        memsz: ph.p_memsz(e),
        file_offset: ph.p_offset(e),
        filesz: ph.p_filesz(e),
        flags: ph.p_flags(e),
    };
    let bad = |why| LoadError::Segment { index, why };
    if seg.filesz > seg.memsz {
        return Err(bad("file size exceeds memory size"));
    }
    if seg
        .file_offset
        .checked_add(seg.filesz)
        .is_none_or(|end| end > data.len() as u64)
    {
        return Err(bad("file bytes lie past the end of the file"));
    }
    if seg.vaddr.checked_add(seg.memsz).is_none() {
        return Err(bad("address range wraps"));
    }
    let align = ph.p_align(e);
    if align > 1 {
        if !align.is_power_of_two() {
            return Err(bad("alignment is not a power of two"));
        }
        if align > MAX_SEGMENT_ALIGN {
            return Err(bad(
                "alignment above 2 MiB (barebell's loader limit; lld aligns to pages)",
            ));
        }
        if seg.vaddr % align != seg.file_offset % align {
            return Err(bad("address and file offset disagree modulo alignment"));
        }
    }
    if let Some(prev) = prev
        && seg.vaddr < prev.vaddr + prev.memsz
    {
        return Err(bad("overlaps or precedes the previous segment"));
    }
    Ok((seg, align.max(1)))
}

/// Parses the `NT_AMDGPU_METADATA` note of a `PT_NOTE` segment into
/// `meta`; refuses a second one.
fn metadata_notes(ph: &Phdr, data: &[u8], meta: &mut Option<Metadata>) -> Result<(), LoadError> {
    let e = LE;
    if let Some(mut notes) = ph.notes(e, data)? {
        while let Some(note) = notes.next()? {
            if note.n_type(e) == NT_AMDGPU_METADATA && note.name() == NOTE_OWNER {
                if meta.is_some() {
                    return Err(LoadError::DuplicateMetadata);
                }
                *meta = Some(metadata::parse(note.desc()).map_err(LoadError::Metadata)?);
            }
        }
    }
    Ok(())
}

/// The image's first vaddr and its size: from the first segment's start
/// to the last one's end, at most [`MAX_IMAGE_BYTES`].
fn image_extent(segments: &[Segment], last_load: usize) -> Result<(u64, u64), LoadError> {
    let first = *segments.first().ok_or(LoadError::NoSegments)?;
    let last = *segments.last().ok_or(LoadError::NoSegments)?;
    let base_vaddr = first.vaddr;
    // Segments are ascending and do not wrap (checked in
    // `check_segment`), so this neither overflows nor underflows.
    let image_size = last.vaddr + last.memsz - base_vaddr;
    if image_size > MAX_IMAGE_BYTES {
        return Err(LoadError::Segment {
            index: last_load,
            why: "the segments span more than 1 GiB (barebell's loader limit)",
        });
    }
    Ok((base_vaddr, image_size))
}

/// Each metadata kernel with its descriptor, found through its `.kd`
/// symbol and checked ([`check_kernel`]).
fn kernels<'d>(
    data: &'d [u8],
    sections: &SectionTable<'d, Hdr>,
    metas: Vec<KernelMeta>,
    segments: &[Segment],
    base_vaddr: u64,
) -> Result<Vec<KernelInfo>, LoadError> {
    let e = LE;
    // Symbols: the dynamic table, where lld puts the `.kd` symbols.
    let dynsym = sections.symbols(e, data, elf::SHT_DYNSYM)?;
    let symtab = sections.symbols(e, data, elf::SHT_SYMTAB)?;
    let mut kernels = Vec::with_capacity(metas.len());
    for km in metas {
        let vaddr = find_symbol([&dynsym, &symtab], &km.symbol)?.ok_or_else(|| {
            LoadError::MissingDescriptor {
                kernel: km.name.clone(),
                symbol: km.symbol.clone(),
            }
        })?;
        kernels.push(check_kernel(data, km, vaddr, segments, base_vaddr)?);
    }
    Ok(kernels)
}

/// The value of the first defined symbol called `name`, looking in
/// `tables` in order.
fn find_symbol(tables: [&SymbolTable<'_, Hdr>; 2], name: &str) -> Result<Option<u64>, LoadError> {
    let e = LE;
    for table in tables {
        for sym in table.iter() {
            if sym.st_shndx(e) == elf::SHN_UNDEF {
                continue;
            }
            if table.symbol_name(e, sym)? == name.as_bytes() {
                return Ok(Some(sym.st_value(e)));
            }
        }
    }
    Ok(None)
}

/// The descriptor at `vaddr` for kernel `km`, checked: 64 aligned,
/// file-backed bytes of a segment, an entry in executable code, and the
/// sizes the metadata gives.
fn check_kernel(
    data: &[u8],
    km: KernelMeta,
    vaddr: u64,
    segments: &[Segment],
    base_vaddr: u64,
) -> Result<KernelInfo, LoadError> {
    let bad = |why| LoadError::BadDescriptor {
        kernel: km.name.clone(),
        why,
    };
    let seg = segments
        .iter()
        .find(|s| s.contains(vaddr, DESCRIPTOR_SIZE as u64, true))
        .ok_or_else(|| bad("is not 64 file-backed bytes of a loaded segment"))?;
    if !(vaddr - base_vaddr).is_multiple_of(DESCRIPTOR_ALIGN) {
        return Err(bad("is not 64-byte aligned"));
    }
    let at = (seg.file_offset + (vaddr - seg.vaddr)) as usize;
    let bytes = data
        .get(at..at + DESCRIPTOR_SIZE)
        .ok_or_else(|| bad("lies past the end of the file"))?;
    let descriptor =
        KernelDescriptor::from_bytes(bytes).ok_or_else(|| bad("lies past the end of the file"))?;
    // The entry must be 256-byte-aligned code in an executable
    // segment (AMDGPUUsage, "Kernel Descriptor").
    let entry = i128::from(vaddr) + i128::from(descriptor.entry_offset());
    let entry_ok = u64::try_from(entry).ok().is_some_and(|entry| {
        entry >= base_vaddr
            && (entry - base_vaddr).is_multiple_of(ENTRY_ALIGN)
            && segments
                .iter()
                .any(|s| s.flags & elf::PF_X != 0 && s.contains(entry, 4, true))
    });
    if !entry_ok {
        return Err(LoadError::BadEntry {
            kernel: km.name.clone(),
            offset: descriptor.entry_offset(),
        });
    }
    check_sizes(&km, &descriptor)?;
    Ok(KernelInfo {
        meta: km,
        descriptor,
        descriptor_vaddr: vaddr,
    })
}

/// The descriptor's segment and kernarg sizes against the metadata's.
fn check_sizes(km: &KernelMeta, descriptor: &KernelDescriptor) -> Result<(), LoadError> {
    for (field, d, m) in [
        (
            "group_segment_fixed_size",
            descriptor.group_segment_fixed_size(),
            km.group_segment_fixed_size,
        ),
        (
            "private_segment_fixed_size",
            descriptor.private_segment_fixed_size(),
            km.private_segment_fixed_size,
        ),
        (
            "kernarg_size",
            descriptor.kernarg_size(),
            km.kernarg_segment_size,
        ),
    ] {
        if d != m {
            return Err(LoadError::DescriptorDisagrees {
                kernel: km.name.clone(),
                field,
                descriptor: d,
                metadata: m,
            });
        }
    }
    Ok(())
}

/// The dynamic relocations, numbered across every `SHT_RELA` section,
/// each resolved by [`resolve_reloc`]; `SHT_REL` sections are refused.
fn relocations<'d>(
    data: &'d [u8],
    sections: &SectionTable<'d, Hdr>,
    base_vaddr: u64,
    image_size: u64,
) -> Result<Vec<Reloc>, LoadError> {
    let e = LE;
    let mut relocs = Vec::new();
    let mut index = 0usize;
    for section in sections.iter() {
        if section.sh_type(e) == elf::SHT_REL && section.sh_size(e) != 0 {
            return Err(LoadError::Relocation {
                index,
                why: RelocProblem::RelWithoutAddend,
            });
        }
        let Some((rela, link)) = section.rela(e, data)? else {
            continue;
        };
        let table = if rela.is_empty() {
            None
        } else {
            Some(sections.symbol_table_by_index(e, data, link)?)
        };
        for r in rela {
            if let Some(reloc) = resolve_reloc(r, index, table.as_ref(), base_vaddr, image_size)? {
                relocs.push(reloc);
            }
            index += 1;
        }
    }
    Ok(relocs)
}

/// Relocation `index` resolved as far as it can be without the load
/// address; `None` for `R_AMDGPU_NONE`.
fn resolve_reloc(
    r: &elf::Rela64<LE>,
    index: usize,
    table: Option<&SymbolTable<'_, Hdr>>,
    base_vaddr: u64,
    image_size: u64,
) -> Result<Option<Reloc>, LoadError> {
    let e = LE;
    let r_type = r.r_type(e, false);
    let problem = |why| LoadError::Relocation { index, why };
    let kind = match r_type {
        R_AMDGPU_NONE => return Ok(None),
        R_AMDGPU_ABS64 => RelocKind::Abs64,
        R_AMDGPU_ABS32_LO => RelocKind::Abs32Lo,
        R_AMDGPU_ABS32_HI => RelocKind::Abs32Hi,
        R_AMDGPU_ABS32 => RelocKind::Abs32,
        R_AMDGPU_RELATIVE64 => RelocKind::Relative64,
        t => return Err(problem(RelocProblem::UnsupportedType(t))),
    };
    let width = if matches!(kind, RelocKind::Abs64 | RelocKind::Relative64) {
        8
    } else {
        4
    };
    let off = r.r_offset(e);
    let in_image = off >= base_vaddr
        && off
            .checked_add(width)
            .is_some_and(|end| end <= base_vaddr + image_size);
    if !in_image {
        return Err(problem(RelocProblem::OutsideImage { offset: off }));
    }
    let sym_index = r.r_sym(e, false);
    let sym_vaddr = if kind == RelocKind::Relative64 || sym_index == 0 {
        0
    } else {
        let table = table.ok_or(problem(RelocProblem::BadSymbol(sym_index)))?;
        let sym = table
            .symbol(object::SymbolIndex(sym_index as usize))
            .map_err(|_| problem(RelocProblem::BadSymbol(sym_index)))?;
        if sym.st_shndx(e) == elf::SHN_UNDEF {
            let name = table
                .symbol_name(e, sym)
                .map(|n| String::from_utf8_lossy(n).to_string())
                .unwrap_or_default();
            return Err(problem(RelocProblem::UndefinedSymbol(name)));
        }
        sym.st_value(e)
    };
    Ok(Some(Reloc {
        at: off - base_vaddr,
        kind,
        sym_vaddr,
        addend: r.r_addend(e),
    }))
}

impl<'a> CodeObject<'a> {
    /// Parses and checks a code object. Never panics on any input.
    pub fn parse(data: &'a [u8]) -> Result<Self, LoadError> {
        let (hdr, target) = check_header(data)?;
        let e = LE;
        // Segments and the metadata note.
        let ProgramHeaders {
            segments,
            meta,
            image_align,
            last_load,
        } = program_headers(hdr, data)?;
        let (base_vaddr, image_size) = image_extent(&segments, last_load)?;
        let meta = meta.ok_or(LoadError::NoMetadata)?;
        let sections = hdr.sections(e, data)?;
        let kernels = kernels(data, &sections, meta.kernels, &segments, base_vaddr)?;
        let relocs = relocations(data, &sections, base_vaddr, image_size)?;
        Ok(CodeObject {
            data,
            target,
            metadata_version: meta.version,
            metadata_target: meta.target,
            segments,
            base_vaddr,
            image_size,
            image_align,
            relocs,
            kernels,
        })
    }

    /// Number of dynamic relocations [`CodeObject::load`] applies.
    pub fn relocation_count(&self) -> usize {
        self.relocs.len()
    }

    /// Whether the code object fits `part`.
    pub fn check(&self, part: &Part) -> Result<(), LoadError> {
        part.accepts(&self.target).map_err(LoadError::Target)
    }

    /// A kernel by name (metadata `.name`).
    pub fn kernel(&self, name: &str) -> Result<&KernelInfo, LoadError> {
        self.kernels
            .iter()
            .find(|k| k.meta.name == name)
            .ok_or_else(|| LoadError::NoSuchKernel {
                name: name.to_string(),
            })
    }

    /// Checks the part, writes the image into `mem` and relocates it for
    /// `mem.device_address`.
    pub fn load(&self, part: &Part, mem: DeviceImage<'_>) -> Result<LoadedCode, LoadError> {
        self.check(part)?;
        let address = mem.device_address;
        if !address.is_multiple_of(self.image_align) {
            return Err(LoadError::MisalignedBase {
                address,
                align: self.image_align,
            });
        }
        if address.checked_add(self.image_size).is_none() {
            return Err(LoadError::AddressOverflow {
                address,
                size: self.image_size,
            });
        }
        let given = mem.host.len() as u64;
        if given < self.image_size {
            return Err(LoadError::ImageTooSmall {
                needed: self.image_size,
                given,
            });
        }
        // `image_size <= host.len()`, so it fits a usize.
        let image = &mut mem.host[..self.image_size as usize];
        image.fill(0);
        for s in &self.segments {
            let dst = (s.vaddr - self.base_vaddr) as usize;
            let src = s.file_offset as usize;
            let n = s.filesz as usize;
            // Checked in `parse`: file bytes inside the file, segment
            // inside the image.
            if let (Some(d), Some(from)) =
                (image.get_mut(dst..dst + n), self.data.get(src..src + n))
            {
                d.copy_from_slice(from);
            }
        }
        // B: where vaddr 0 lands.
        let delta = address.wrapping_sub(self.base_vaddr);
        for r in &self.relocs {
            let s_plus_a = delta
                .wrapping_add(r.sym_vaddr)
                .wrapping_add(r.addend as u64);
            let at = r.at as usize;
            let patch: ([u8; 8], usize) = match r.kind {
                RelocKind::Abs64 | RelocKind::Relative64 => (s_plus_a.to_le_bytes(), 8),
                RelocKind::Abs32Lo | RelocKind::Abs32 => (s_plus_a.to_le_bytes(), 4),
                RelocKind::Abs32Hi => ((s_plus_a >> 32).to_le_bytes(), 4),
            };
            if let Some(d) = image.get_mut(at..at + patch.1) {
                d.copy_from_slice(&patch.0[..patch.1]);
            }
        }
        let kernels = self
            .kernels
            .iter()
            .map(|k| {
                let descriptor_address = delta.wrapping_add(k.descriptor_vaddr);
                Kernel {
                    meta: k.meta.clone(),
                    layout: ArgLayout::new(&k.meta),
                    descriptor: k.descriptor,
                    descriptor_address,
                    entry_address: descriptor_address
                        .wrapping_add(k.descriptor.entry_offset() as u64),
                }
            })
            .collect();
        Ok(LoadedCode {
            device_address: address,
            size: self.image_size,
            kernels,
        })
    }
}

/// Device memory for an image: a host view of it and the address the
/// device sees it at.
#[derive(Debug)]
pub struct DeviceImage<'m> {
    pub host: &'m mut [u8],
    pub device_address: u64,
}

/// A kernel in loaded code: everything a launch needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub meta: KernelMeta,
    /// The arguments reduced to what a launch reads.
    pub layout: ArgLayout,
    pub descriptor: KernelDescriptor,
    /// The dispatch packet's `kernel_object`.
    pub descriptor_address: u64,
    /// Device address of the first instruction.
    pub entry_address: u64,
}

/// A code object written into device memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedCode {
    pub device_address: u64,
    pub size: u64,
    pub kernels: Vec<Kernel>,
}

impl LoadedCode {
    /// A kernel by name (metadata `.name`).
    pub fn kernel(&self, name: &str) -> Result<&Kernel, LoadError> {
        self.kernels
            .iter()
            .find(|k| k.meta.name == name)
            .ok_or_else(|| LoadError::NoSuchKernel {
                name: name.to_string(),
            })
    }
}

/// Relocation-type facts, against LLVM 19's `ELF.h` (`ELFRelocs/AMDGPU.def`).
pub const FACTS: &[Fact] = &[
    Fact::constant(ELF_H, "llvm::ELF::R_AMDGPU_NONE", R_AMDGPU_NONE as u64),
    Fact::constant(
        ELF_H,
        "llvm::ELF::R_AMDGPU_ABS32_LO",
        R_AMDGPU_ABS32_LO as u64,
    ),
    Fact::constant(
        ELF_H,
        "llvm::ELF::R_AMDGPU_ABS32_HI",
        R_AMDGPU_ABS32_HI as u64,
    ),
    Fact::constant(ELF_H, "llvm::ELF::R_AMDGPU_ABS64", R_AMDGPU_ABS64 as u64),
    Fact::constant(ELF_H, "llvm::ELF::R_AMDGPU_ABS32", R_AMDGPU_ABS32 as u64),
    Fact::constant(
        ELF_H,
        "llvm::ELF::R_AMDGPU_RELATIVE64",
        R_AMDGPU_RELATIVE64 as u64,
    ),
];
