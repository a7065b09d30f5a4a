//! Why a launch on a brought-up device failed.

use alloc::string::String;
use barebell::aql::watchdog::Stall;
use barebell_bringup::usermem::UserMemoryError;
use barebell_kernel::LoadError;
use barebell_kernel::scratch::ScratchError;
use core::fmt;

/// Every way [`crate::Launcher`] fails. Each text is the one `barebell
/// run` printed before the launch became a library.
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchError {
    /// Discovery found a GC version (or XCC count) the loader knows no
    /// part for.
    UnknownPart { gc: (u8, u8, u8), xccs: u32 },
    /// The bring-up stopped before the queue step.
    NoQueue,
    /// The bring-up handed out no user memory.
    NoUserMemory,
    /// The user memory could not hold `what`.
    Memory {
        what: &'static str,
        error: UserMemoryError,
    },
    /// Queue scratch of `bytes` did not fit the user memory.
    ScratchMemory {
        bytes: usize,
        error: UserMemoryError,
    },
    /// A size that does not fit this machine's `usize`.
    TooLarge { what: &'static str },
    /// The code object did not parse, fit the part or load.
    CodeObject(LoadError),
    /// The code object has no such kernel.
    Kernel { name: String, error: LoadError },
    /// Queue scratch could not be planned.
    Scratch(ScratchError),
    /// The kernel needs private memory and no scratch sizes were given
    /// (on a GPU, the CU and SE counts are not read yet).
    NoScratchPart { private: u32 },
    /// The launch itself was refused (arguments, geometry, ring space).
    Launch(barebell_kernel::LaunchError),
    /// The device recorded an error while the dispatch was pending.
    Device(String),
    /// The watcher asked to stop with the dispatch pending.
    Interrupted { by: &'static str, signal: i64 },
    /// The queue's read index stood still with packets unfetched.
    Hung(Stall),
    /// The completion signal did not reach 0 within the bound.
    Timeout { bound_ns: u64, signal: i64 },
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::UnknownPart {
                gc: (9, 4, 3),
                xccs,
            } => write!(
                f,
                "GC 9.4.3 with {xccs} XCCs: the loader knows the 8-XCC (mi300x) and 4-XCC (mi308x) parts only"
            ),
            LaunchError::UnknownPart { gc: (a, b, c), .. } => write!(
                f,
                "GC {a}.{b}.{c}: the loader knows the parts of GC 11.0.0 (gfx1100), 12.0.1 (gfx1201) and 9.4.3 (gfx942) only"
            ),
            LaunchError::NoQueue => f.write_str("the bring-up stopped before the queue"),
            LaunchError::NoUserMemory => f.write_str("the bring-up handed out no user memory"),
            LaunchError::Memory { what, error } => write!(f, "{what}: {error}"),
            LaunchError::ScratchMemory { bytes, error } => {
                write!(f, "queue scratch of {bytes} bytes: {error}")
            }
            LaunchError::TooLarge { what } => write!(f, "{what} too large"),
            LaunchError::CodeObject(e) => write!(f, "code object: {e}"),
            LaunchError::Kernel { name, error } => write!(f, "kernel {name}: {error}"),
            LaunchError::Scratch(e) => write!(f, "queue scratch: {e}"),
            LaunchError::NoScratchPart { private } => write!(
                f,
                "the kernel needs {private} private bytes per work-item: queue scratch on a GPU needs its CU and shader-engine counts, which barebell does not read yet"
            ),
            LaunchError::Launch(e) => write!(f, "launch: {e}"),
            LaunchError::Device(e) => write!(f, "the device reported: {e}"),
            LaunchError::Interrupted { by, signal } => write!(
                f,
                "interrupted by {by} with the dispatch pending (signal value {signal})"
            ),
            LaunchError::Hung(s) => {
                write!(f, "the queue hung: {s}; ")?;
                for (i, id) in (s.read_index..s.write_index).enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}packet {id}: lost (never fetched)")?;
                }
                f.write_str("; the queue must be reset or the device brought up again")
            }
            LaunchError::Timeout { bound_ns, signal } => write!(
                f,
                "the dispatch did not complete within {} ms (signal value {signal})",
                bound_ns / 1_000_000
            ),
        }
    }
}

impl core::error::Error for LaunchError {}

#[cfg(test)]
mod tests {
    use super::LaunchError;
    use alloc::string::ToString;
    use barebell::aql::watchdog::Stall;

    #[test]
    fn a_hang_names_every_packet_lost() {
        let s = Stall {
            read_index: 4,
            write_index: 6,
            stalled_ns: 500_000_000,
        };
        let text = LaunchError::Hung(s).to_string();
        assert!(
            text.ends_with(
                "; packet 4: lost (never fetched), packet 5: lost (never fetched); the queue must be reset or the device brought up again"
            ),
            "{text}"
        );
        assert!(text.starts_with("the queue hung: read index stuck at 4"));
    }

    #[test]
    fn unknown_parts_and_timeouts_read_as_before() {
        let e = LaunchError::UnknownPart {
            gc: (9, 4, 3),
            xccs: 2,
        };
        assert!(e.to_string().starts_with("GC 9.4.3 with 2 XCCs: "));
        let e = LaunchError::UnknownPart {
            gc: (10, 3, 0),
            xccs: 1,
        };
        assert!(e.to_string().starts_with("GC 10.3.0: the loader knows"));
        let e = LaunchError::Timeout {
            bound_ns: 2_000_000_000,
            signal: 1,
        };
        assert_eq!(
            e.to_string(),
            "the dispatch did not complete within 2000 ms (signal value 1)"
        );
    }
}
