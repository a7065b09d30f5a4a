//! The condition of a signal wait, shared by the packets that carry it
//! (`BarrierValuePacket`) and the waits on signals: a leaf module, so
//! `packet` and `signal` do not import each other.

/// `hsa_signal_condition_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Condition {
    Eq = 0,
    Ne = 1,
    Lt = 2,
    Gte = 3,
}

impl Condition {
    #[inline]
    pub fn holds(self, value: i64, compare: i64) -> bool {
        match self {
            Condition::Eq => value == compare,
            Condition::Ne => value != compare,
            Condition::Lt => value < compare,
            Condition::Gte => value >= compare,
        }
    }

    /// Decodes the 32-bit encoding used in barrier-value packets.
    pub fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Condition::Eq),
            1 => Some(Condition::Ne),
            2 => Some(Condition::Lt),
            3 => Some(Condition::Gte),
            _ => None,
        }
    }
}
