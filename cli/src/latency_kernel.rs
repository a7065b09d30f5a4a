//! The real kernels `barebell latency --kernel` times: `empty` and `vadd`
//! (built from `gpu-kernels/kernels/latency.cl` with clang-19 by the
//! `barebell-gpu-kernels` crate),
//! or `FILE.co:NAME`.
//!
//! A kernel is placed once (code object loaded, buffers and kernarg
//! segment written) and the same dispatch packet is submitted every
//! iteration, so each iteration measures submit, CP pickup, the kernel's
//! waves on the model's shader engines and completion.

use crate::dma_view::ViewToVec;
use crate::model_launch::{self, DeviceMemory, Session};
use crate::target::PartArg;
use barebell::aql::packet::{KernelDispatchPacket, SignalHandle};
use barebell::time::StdClock;
use barebell_kernel::kernarg::Geometry;
use barebell_kernel::launch::{Prepared, prepare, private_segment_size};
use barebell_kernel::metadata::ValueKind;
use barebell_kernel::{Arg, KernargBuffer, Kernel, LaunchContext, LoadedCode, Scalar};
use std::time::Instant;

use barebell_gpu_kernels as built;

/// Elements of the built-in vadd: 4 workgroups of 256.
pub const VADD_N: u32 = 1024;
const VADD_BLOCK: u32 = 256;
/// Workgroup size of `empty` and of a kernel from a file: one workgroup.
const SMALL_BLOCK: u32 = 64;
/// Zeroed bytes each buffer argument of a kernel from a file gets.
const FILE_BUFFER_BYTES: usize = 1 << 16;

/// A kernel to time.
#[derive(Debug, Clone)]
pub struct KernelSpec {
    /// What the user asked for (`empty`, `vadd`, `FILE.co:NAME`).
    pub label: String,
    /// The kernel's name in the code object.
    pub name: String,
    /// Where the code object came from.
    pub source: String,
    pub bytes: Vec<u8>,
    pub geometry: Geometry,
    vadd: bool,
}

impl KernelSpec {
    /// `empty`, `vadd` (built-in, for `part`'s processor) or
    /// `FILE.co:NAME`.
    pub fn resolve(choice: &str, part: PartArg) -> Result<KernelSpec, String> {
        let one = |block| Geometry {
            grid: [1, 1, 1],
            block: [block, 1, 1],
            dims: 1,
            dynamic_lds: 0,
        };
        let builtin = |name: &str| -> Result<KernelSpec, String> {
            let (bytes, mcpu) = match part {
                PartArg::Navi31 => (built::GFX1100, "gfx1100"),
                PartArg::Navi48 => (built::GFX1201, "gfx1201"),
                PartArg::Mi300x | PartArg::Mi308x => (built::GFX942, "gfx942"),
                PartArg::Mi210 => (built::GFX90A, "gfx90a"),
            };
            let vadd = name == "vadd";
            Ok(KernelSpec {
                label: name.to_string(),
                name: name.to_string(),
                source: format!("built-in ({}, {mcpu}, code object v5)", built::SOURCE),
                bytes: bytes.to_vec(),
                geometry: if vadd {
                    Geometry {
                        grid: [VADD_N / VADD_BLOCK, 1, 1],
                        ..one(VADD_BLOCK)
                    }
                } else {
                    one(SMALL_BLOCK)
                },
                vadd,
            })
        };
        match choice {
            "empty" | "vadd" => builtin(choice),
            _ => {
                let (file, name) = choice.rsplit_once(':').ok_or_else(|| {
                    format!("--kernel {choice}: give empty, vadd or FILE.co:NAME")
                })?;
                let bytes =
                    std::fs::read(file).map_err(|e| format!("--kernel: reading {file}: {e}"))?;
                Ok(KernelSpec {
                    label: choice.to_string(),
                    name: name.to_string(),
                    source: file.to_string(),
                    bytes,
                    geometry: one(SMALL_BLOCK),
                    vadd: false,
                })
            }
        }
    }

    /// This kernel for `part`: a built-in one rebuilt for that part's
    /// processor (the part a GPU's discovery found), a file's unchanged.
    pub fn for_part(&self, part: PartArg) -> Result<KernelSpec, String> {
        if self.source.starts_with("built-in") {
            KernelSpec::resolve(&self.label, part)
        } else {
            Ok(self.clone())
        }
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        let g = &self.geometry;
        format!(
            "{} from {}, {} workgroup(s) of {}{}",
            self.name,
            self.source,
            g.grid[0],
            g.block[0],
            if self.vadd {
                format!(", c = a + b over {VADD_N} f32")
            } else {
                String::new()
            }
        )
    }

    /// Loads the kernel into `mem` (the CP model's DMA windows on the
    /// unmapped path, the bring-up's user memory on a mapped queue, model
    /// or GPU), writes its buffers and kernargs, and returns the packet to
    /// submit (completion signal `signal`) and a check of its result.
    pub fn place<'m>(
        &self,
        mem: &mut dyn DeviceMemory<'m>,
        ctx: &LaunchContext,
        signal: SignalHandle,
    ) -> Result<Placed<'m>, String> {
        let code = model_launch::load(mem, &ctx.part, &self.bytes)?;
        self.place_loaded(mem, &code, ctx, signal)
    }

    /// [`KernelSpec::place`] for a code object already loaded.
    pub fn place_loaded<'m>(
        &self,
        mem: &mut dyn DeviceMemory<'m>,
        code: &LoadedCode,
        ctx: &LaunchContext,
        signal: SignalHandle,
    ) -> Result<Placed<'m>, String> {
        let (kernel, args, mut kb, c_out) = self.buffers(mem, code, ctx)?;
        let packet = prepare(ctx, kernel, &self.geometry, &args, &mut kb, signal)
            .map_err(|e| format!("kernel {}: {e}", self.name))?;
        Ok(Placed { packet, c_out })
    }

    /// The kernel, its arguments (buffers allocated in `mem` and filled)
    /// and a kernarg buffer in `mem`; for vadd, the output to check.
    #[allow(clippy::type_complexity)]
    fn buffers<'c, 'm>(
        &self,
        mem: &mut dyn DeviceMemory<'m>,
        code: &'c LoadedCode,
        ctx: &LaunchContext,
    ) -> Result<
        (
            &'c Kernel,
            Vec<Arg<'static>>,
            KernargBuffer<'m>,
            Option<crate::dma_view::DmaView<'m>>,
        ),
        String,
    > {
        let kernel = code
            .kernel(&self.name)
            .map_err(|e| format!("kernel {}: {e}", self.name))?;
        if private_segment_size(kernel, ctx.stack_bytes) > 0 && ctx.scratch.is_none() {
            return Err(format!(
                "kernel {} needs scratch; latency's queue has none",
                self.name
            ));
        }
        let mut args: Vec<Arg<'static>> = Vec::new();
        let mut c_out: Option<crate::dma_view::DmaView<'m>> = None;
        if self.vadd {
            let n = VADD_N as usize;
            let a = mem.alloc(n * 4, 256)?;
            let b = mem.alloc(n * 4, 256)?;
            let fill =
                |k: f32| -> Vec<u8> { (0..n).flat_map(|i| (k * i as f32).to_le_bytes()).collect() };
            a.write(0, &fill(1.0));
            b.write(0, &fill(2.0));
            // The kernel writes c: a view, as every buffer is.
            let c = mem.alloc(n * 4, 256)?;
            args.push(Arg::Buffer(a.address()));
            args.push(Arg::Buffer(b.address()));
            args.push(Arg::Buffer(c.address()));
            args.push(Arg::Scalar(Scalar::U32(VADD_N)));
            c_out = Some(c);
        } else {
            for (i, m) in kernel.meta.explicit_args() {
                match m.value_kind {
                    ValueKind::GlobalBuffer => {
                        let b = mem.alloc(FILE_BUFFER_BYTES, 256)?;
                        args.push(Arg::Buffer(b.address()));
                    }
                    ValueKind::ByValue => {
                        let z: &'static [u8] =
                            Box::leak(vec![0u8; m.size as usize].into_boxed_slice());
                        args.push(Arg::Bytes(z));
                    }
                    ref k => {
                        return Err(format!(
                            "kernel {}: argument {i} is {k}; latency gives kernels from files only zeroed buffers and zero values",
                            self.name
                        ));
                    }
                }
            }
        }
        let len = kernel.meta.kernarg_segment_size.max(16) as usize;
        let align = kernel.meta.kernarg_segment_align.max(16) as usize;
        let host = mem.alloc(len, align)?;
        let device_address = host.address();
        // SAFETY: fresh bytes the launch fills before the dispatch that
        // reads them; the device only reads kernargs.
        let host = unsafe { host.into_host_bytes() };
        let kb = KernargBuffer {
            host,
            device_address,
        };
        Ok((kernel, args, kb, c_out))
    }

    /// Time from the code object's bytes in memory to the first dispatch's
    /// completion, on a fresh model queue stepped on this thread (parse,
    /// load, buffers, kernargs, packet, submit, CP pickup, waves,
    /// completion), and of it the load alone (parse, target check, copy
    /// and relocation: `hipModuleLoad`'s share). The dispatch goes through
    /// a [`Prepared`] launch, as a program launching it again would.
    pub fn first_launch(&self, part: PartArg, seed: u64) -> Result<FirstLaunch, String> {
        let mut s = Session::new(part, seed)?;
        let ctx = s.context();
        let start = Instant::now();
        let code = model_launch::load(&mut s.model, &ctx.part, &self.bytes)?;
        let loaded = Instant::now();
        let (kernel, args, kb, c_out) = self.buffers(&mut s.model, &code, &ctx)?;
        let mut prepared = Prepared::new(&ctx, kernel, &self.geometry, &args, kb, s.signal)
            .map_err(|e| format!("kernel {}: {e}", self.name))?;
        prepared
            .launch(&s.queue.queue, &args, &StdClock::default(), 1_000_000_000)
            .map_err(|e| format!("kernel {}: {e}", self.name))?;
        let submitted = Instant::now();
        let steps = s.model.run_until_idle(1_000_000);
        let end = Instant::now();
        let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        if let Some(e) = s.model.errors().first() {
            return Err(format!("first launch of {}: {e}", self.name));
        }
        if steps.is_none() || s.signal.value() != 0 {
            return Err(format!("first launch of {} did not complete", self.name));
        }
        Placed {
            packet: *prepared.packet(),
            c_out,
        }
        .check()?;
        Ok(FirstLaunch {
            load_ns: ns(loaded - start),
            launch_ns: ns(submitted - loaded),
            first_launch_ns: ns(end - start),
        })
    }
}

/// [`KernelSpec::first_launch`]'s two figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstLaunch {
    /// Code-object bytes to a loaded kernel (`hipModuleLoad`).
    pub load_ns: u64,
    /// After the load: buffers placed, launch prepared (checks, kernarg
    /// image, packet) and submitted (`hipModuleLaunchKernel`'s share).
    pub launch_ns: u64,
    /// Code-object bytes to the first completion (load included).
    pub first_launch_ns: u64,
}

/// A placed kernel: its packet and, for vadd, the output to check.
#[derive(Debug)]
pub struct Placed<'m> {
    pub packet: KernelDispatchPacket,
    c_out: Option<crate::dma_view::DmaView<'m>>,
}

impl Placed<'_> {
    /// vadd: c[i] = i + 2i for every i (exact in f32 below 2^24).
    pub fn check(&self) -> Result<(), String> {
        let Some(c) = self.c_out else {
            return Ok(());
        };
        for (i, w) in c.to_vec().chunks_exact(4).enumerate() {
            let got = f32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            if got != 3.0 * i as f32 {
                return Err(format!("vadd: c[{i}] = {got}, expected {}", 3 * i));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use barebell_kernel::launch::Buffer;

    /// vadd through one prepared launch, three times on the CP model with
    /// other buffers each time (the typed and the `&[Arg]` forms): each
    /// dispatch computes its own c = a + b.
    #[test]
    fn prepared_launches_run_vadd_on_the_model() {
        let spec = KernelSpec::resolve("vadd", PartArg::Navi31).unwrap();
        let mut s = Session::new(PartArg::Navi31, 1).unwrap();
        let ctx = s.context();
        let code = model_launch::load(&mut s.model, &ctx.part, &spec.bytes).unwrap();
        let (kernel, args, kb, _) = spec.buffers(&mut s.model, &code, &ctx).unwrap();
        let mut p = Prepared::new(&ctx, kernel, &spec.geometry, &args, kb, s.signal).unwrap();
        let n = VADD_N as usize;
        let clock = StdClock::default();
        for round in 0..3u32 {
            let a = model_launch::alloc(&mut s.model, n * 4, 256);
            let b = model_launch::alloc(&mut s.model, n * 4, 256);
            let c = model_launch::alloc(&mut s.model, n * 4, 256);
            for i in 0..n {
                a[i * 4..i * 4 + 4]
                    .copy_from_slice(&((i as f32) * (round + 1) as f32).to_le_bytes());
                b[i * 4..i * 4 + 4].copy_from_slice(&(round as f32).to_le_bytes());
            }
            let (ap, bp, cp) = (a.as_ptr() as u64, b.as_ptr() as u64, c.as_ptr() as u64);
            if round == 1 {
                let args = [
                    Arg::Buffer(ap),
                    Arg::Buffer(bp),
                    Arg::Buffer(cp),
                    Arg::Scalar(Scalar::U32(VADD_N)),
                ];
                p.launch(&s.queue.queue, &args, &clock, 1_000_000_000)
                    .unwrap();
            } else {
                let mut t = p.typed::<(Buffer, Buffer, Buffer, u32)>().unwrap();
                t.launch(
                    &s.queue.queue,
                    (Buffer(ap), Buffer(bp), Buffer(cp), VADD_N),
                    &clock,
                    1_000_000_000,
                )
                .unwrap();
            }
            assert!(s.model.run_until_idle(1_000_000).is_some());
            assert!(s.model.errors().is_empty(), "{:?}", s.model.errors());
            assert_eq!(s.signal.value(), 0, "round {round} completed");
            for i in 0..n {
                let got = f32::from_le_bytes(c[i * 4..i * 4 + 4].try_into().unwrap());
                let want = (i as f32) * (round + 1) as f32 + round as f32;
                assert_eq!(got, want, "round {round}, c[{i}]");
            }
        }
    }
}
