//! Where the bring-up reports: each finished step, and (when asked) every
//! register access. The CLI prints text or JSON, the unikernel sends
//! defmt frames, tests collect; the steps never print.

use barebell::bus::trace::Access;
use barebell::gmc::hub::VmFault;
use core::fmt;

/// The named steps, in the order they run (Linux's IP-block order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// Open the device (the platform's own step; the bring-up starts
    /// after it).
    Open,
    /// Read and parse the IP discovery table.
    Discovery,
    /// The start-of-day state: detection, then a mode-1 reset or a
    /// partial re-init ([`crate::start`]).
    Start,
    /// NBIO/NBIF: HDP flush remap, doorbell aperture, indirect registers.
    Nbio,
    /// GMC: FB and GART placement, VMID0 tables, MMHUB.
    Gmc,
    /// IH: interrupt ring 0 in GTT, polled (issue 20).
    Ih,
    /// PSP: bootloader, sOS, TOC, TMR, firmware loads, RLC autoload.
    Psp,
    /// RLC autoload done; GFXHUB.
    Rlc,
    /// MES pipes started (with a mapping).
    Mes,
    /// The KIQ and MES rings (with a mapping).
    Rings,
    /// One user queue mapped and a first packet through it.
    Queue,
    /// Taking the queue off the device.
    Unmap,
    /// Teardown: everything the bring-up set up, undone in reverse
    /// ([`crate::teardown`]).
    Teardown,
}

impl Step {
    /// Every step the bring-up runs, in order.
    pub const ALL: [Step; 10] = [
        Step::Discovery,
        Step::Start,
        Step::Nbio,
        Step::Gmc,
        Step::Ih,
        Step::Psp,
        Step::Rlc,
        Step::Mes,
        Step::Rings,
        Step::Queue,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Step::Open => "open",
            Step::Discovery => "discovery",
            Step::Start => "start",
            Step::Nbio => "nbio",
            Step::Gmc => "gmc",
            Step::Ih => "ih",
            Step::Psp => "psp",
            Step::Rlc => "rlc",
            Step::Mes => "mes",
            Step::Rings => "rings",
            Step::Queue => "queue",
            Step::Unmap => "unmap",
            Step::Teardown => "teardown",
        }
    }

    /// The step named `name`, as `--until` spells it.
    pub fn from_name(name: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Receives the bring-up's reports. Methods take `&self` so that the
/// trace can be reported from inside a register access; implementations
/// keep their own interior mutability.
pub trait Sink {
    /// A step did something worth saying (one line, no trailing newline).
    fn step(&self, step: Step, detail: fmt::Arguments<'_>);
    /// Whether [`Sink::access`] wants the register trace.
    fn tracing(&self) -> bool {
        false
    }
    /// One register access, resolved to a name where the register is
    /// known.
    fn access(&self, _a: Access) {}
    /// Host wall time in ns, for timing steps (the mapping call); `None`
    /// times them on the platform's clock (simulated time on the model).
    fn wall_ns(&self) -> Option<u64> {
        None
    }
    /// Whether the caller wants the bring-up to stop (the CLI's SIGINT,
    /// SIGTERM and SIGPIPE handler sets a flag this reads). Checked
    /// before each step; a `true` ends the bring-up with
    /// [`crate::ErrorKind::Interrupted`] and the normal teardown.
    fn cancelled(&self) -> bool {
        false
    }
    /// A VM fault a hub had latched, read when the teardown starts
    /// ([`crate::Gpu::latched_faults`]), so that the fault behind a
    /// failed step is reported before the device is torn down.
    fn fault(&self, _f: &VmFault) {}
    /// An interrupt decoded from the IH ring when the teardown starts
    /// ([`crate::Gpu::poll_interrupts`]): the faults and shader errors
    /// behind a failed step, with the VMID and queue they came from.
    fn interrupt(&self, _i: &barebell::ih::Interrupt) {}
    /// The IP instances the discovery step found, with their register
    /// bases, once it has found them (before any later step runs), so a
    /// sink can name registers the bring-up's own lists do not.
    fn discovered(&self, _ips: &[barebell::discovery::IpInfo]) {}
}

/// A sink that keeps nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Sink for Quiet {
    fn step(&self, _: Step, _: fmt::Arguments<'_>) {}
}

#[cfg(test)]
mod tests {
    use super::Step;

    /// `--until` takes each step by the name the manuals spell
    /// (`docs/hardware.md`: `--until rlc`; the issue's `--until psp`).
    #[test]
    fn until_takes_every_step_by_its_documented_name() {
        let documented = [
            ("discovery", Step::Discovery),
            ("start", Step::Start),
            ("nbio", Step::Nbio),
            ("gmc", Step::Gmc),
            ("ih", Step::Ih),
            ("psp", Step::Psp),
            ("rlc", Step::Rlc),
            ("mes", Step::Mes),
            ("rings", Step::Rings),
            ("queue", Step::Queue),
        ];
        for (name, step) in documented {
            assert_eq!(Step::from_name(name), Some(step), "{name}");
        }
        assert_eq!(Step::from_name(""), None);
        assert_eq!(Step::from_name("teardown"), None);
    }
}
