//! Shared fixtures for the integration tests in `tests/`.
