//! Measuring doorbell-submission latency: a time-stamp counter and a
//! fixed-memory histogram, both usable with no OS (the unikernel reports
//! the same summary as the host tool).

pub mod hist;
pub mod run;
pub mod tsc;

pub use hist::{Histogram, Outliers, Summary};
