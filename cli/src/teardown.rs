//! The teardown's report lines of the commands that open an SDMA queue
//! on a brought-up device (`copy`, `vector-add`).

/// The teardown's lines, one a stage: the SDMA queue's stop (`None`:
/// never opened), each stage of `Gpu::shutdown`, the model's own
/// end-state check (no engine pointing at released memory, bus mastering
/// off); and whether all of it was complete.
pub fn teardown_lines(
    stopped: Option<Result<(), barebell_bringup::BringupError>>,
    torn: &barebell_bringup::TeardownReport,
    quiet: Result<(), String>,
) -> (Vec<String>, bool) {
    let mut teardown = vec![match &stopped {
        Some(Ok(())) => "stop SDMA queue: done".to_string(),
        Some(Err(e)) => format!("stop SDMA queue: FAILED: {e}"),
        None => "stop SDMA queue: not needed: never opened".to_string(),
    }];
    teardown.extend(
        torn.stages
            .iter()
            .map(|(st, o)| format!("{}: {o}", st.name())),
    );
    teardown.push(match &quiet {
        Ok(()) => "model: quiescent".to_string(),
        Err(e) => format!("model: NOT QUIESCENT: {e}"),
    });
    let complete = !matches!(stopped, Some(Err(_))) && torn.complete() && quiet.is_ok();
    (teardown, complete)
}
