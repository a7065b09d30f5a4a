//! The MP0 (PSP) mailbox registers barebell uses, per MP0 version: the
//! `C2PMSG` registers of `mp_13_0_0_offset.h` and their `MPASP_` twins in
//! `mp_14_0_2_offset.h` (checked by the conformance facts of those
//! modules). A table of offsets only; the PSP protocol is in
//! [`crate::psp`].

use crate::regs::Reg;

/// The mailbox registers of one MP0 version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PspRegs {
    pub c2pmsg_35: Reg,
    pub c2pmsg_36: Reg,
    pub c2pmsg_64: Reg,
    pub c2pmsg_67: Reg,
    pub c2pmsg_69: Reg,
    pub c2pmsg_70: Reg,
    pub c2pmsg_71: Reg,
    pub c2pmsg_81: Reg,
}

impl PspRegs {
    pub const MP0_13_0_0: PspRegs = {
        use crate::regs::mp_13_0_0::*;
        PspRegs {
            c2pmsg_35: MP0_SMN_C2PMSG_35,
            c2pmsg_36: MP0_SMN_C2PMSG_36,
            c2pmsg_64: MP0_SMN_C2PMSG_64,
            c2pmsg_67: MP0_SMN_C2PMSG_67,
            c2pmsg_69: MP0_SMN_C2PMSG_69,
            c2pmsg_70: MP0_SMN_C2PMSG_70,
            c2pmsg_71: MP0_SMN_C2PMSG_71,
            c2pmsg_81: MP0_SMN_C2PMSG_81,
        }
    };
    /// MP0 13.0.6 (MI300): the same mailboxes at the same offsets.
    pub const MP0_13_0_6: PspRegs = {
        use crate::regs::mp_13_0_6::*;
        PspRegs {
            c2pmsg_35: MP0_SMN_C2PMSG_35,
            c2pmsg_36: MP0_SMN_C2PMSG_36,
            c2pmsg_64: MP0_SMN_C2PMSG_64,
            c2pmsg_67: MP0_SMN_C2PMSG_67,
            c2pmsg_69: MP0_SMN_C2PMSG_69,
            c2pmsg_70: MP0_SMN_C2PMSG_70,
            c2pmsg_71: MP0_SMN_C2PMSG_71,
            c2pmsg_81: MP0_SMN_C2PMSG_81,
        }
    };
    /// MP0 13.0.2 (Aldebaran): the same mailboxes at the same offsets.
    pub const MP0_13_0_2: PspRegs = {
        use crate::regs::mp_13_0_2::*;
        PspRegs {
            c2pmsg_35: MP0_SMN_C2PMSG_35,
            c2pmsg_36: MP0_SMN_C2PMSG_36,
            c2pmsg_64: MP0_SMN_C2PMSG_64,
            c2pmsg_67: MP0_SMN_C2PMSG_67,
            c2pmsg_69: MP0_SMN_C2PMSG_69,
            c2pmsg_70: MP0_SMN_C2PMSG_70,
            c2pmsg_71: MP0_SMN_C2PMSG_71,
            c2pmsg_81: MP0_SMN_C2PMSG_81,
        }
    };
    pub const MP0_14_0_2: PspRegs = {
        use crate::regs::mp_14_0_2::*;
        PspRegs {
            c2pmsg_35: MPASP_SMN_C2PMSG_35,
            c2pmsg_36: MPASP_SMN_C2PMSG_36,
            c2pmsg_64: MPASP_SMN_C2PMSG_64,
            c2pmsg_67: MPASP_SMN_C2PMSG_67,
            c2pmsg_69: MPASP_SMN_C2PMSG_69,
            c2pmsg_70: MPASP_SMN_C2PMSG_70,
            c2pmsg_71: MPASP_SMN_C2PMSG_71,
            c2pmsg_81: MPASP_SMN_C2PMSG_81,
        }
    };

    /// The register set for an MP0 version from discovery.
    pub fn for_version(v: (u8, u8, u8)) -> Option<PspRegs> {
        match v {
            (13, 0, 0) => Some(Self::MP0_13_0_0),
            (13, 0, 2) => Some(Self::MP0_13_0_2),
            (13, 0, 6) => Some(Self::MP0_13_0_6),
            (14, 0, 2) | (14, 0, 3) => Some(Self::MP0_14_0_2),
            _ => None,
        }
    }
}
