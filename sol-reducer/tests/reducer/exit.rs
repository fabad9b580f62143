//! Exit signals and the runtime status line.

use sol_reducer::exit::{
    ExitSignal, StatusLine, ThenRunMarker, bash_exit_signal, fused_exit_signal, split_status_line,
    trailing_status,
};

#[test]
fn status_lines_are_recognised_exactly() {
    let cases = [
        (
            "Command exited with code 2",
            Some(StatusLine::Exited(Some(2))),
        ),
        (
            "Command exited with code 0",
            Some(StatusLine::Exited(Some(0))),
        ),
        (
            "Command exited with code -1",
            Some(StatusLine::Exited(Some(-1))),
        ),
        (
            "Command exited with code 99999999999999999999999",
            Some(StatusLine::Exited(None)),
        ),
        (
            "Command exited with code 2\r",
            Some(StatusLine::Exited(Some(2))),
        ),
        (
            "Command timed out after 30 seconds",
            Some(StatusLine::TimedOut),
        ),
        (
            "Command timed out after 0.25 seconds",
            Some(StatusLine::TimedOut),
        ),
        (
            "Command timed out after 1 second",
            Some(StatusLine::TimedOut),
        ),
        ("Command aborted", Some(StatusLine::Aborted)),
        (
            "Command terminated without an exit code",
            Some(StatusLine::Terminated),
        ),
        ("Command exited with code", None),
        ("Command exited with code x", None),
        ("Command exited with code 2 (signal)", None),
        (" Command exited with code 2", None),
        ("command exited with code 2", None),
        ("Command timed out", None),
        ("", None),
    ];
    for (line, expected) in cases {
        assert_eq!(StatusLine::parse(line), expected, "{line:?}");
    }
    assert!(!StatusLine::Exited(Some(0)).is_failure());
    assert!(StatusLine::Exited(None).is_failure());
    assert!(StatusLine::Aborted.is_failure());
}

#[test]
fn bash_signals_follow_the_requirement_order() {
    let failed = "out\n\n\nCommand exited with code 3";
    assert_eq!(bash_exit_signal(Some(0), failed), ExitSignal::Succeeded);
    assert_eq!(bash_exit_signal(Some(3), "out"), ExitSignal::Failed);
    assert_eq!(bash_exit_signal(Some(0), "out"), ExitSignal::Succeeded);
    assert_eq!(bash_exit_signal(None, failed), ExitSignal::Failed);
    assert_eq!(
        bash_exit_signal(None, "out\n\nCommand exited with code 3\n"),
        ExitSignal::Failed
    );
    assert_eq!(
        bash_exit_signal(None, "out\n\nCommand timed out after 5 seconds"),
        ExitSignal::Failed
    );
    assert_eq!(
        bash_exit_signal(None, "out\n\nCommand aborted"),
        ExitSignal::Failed
    );
    assert_eq!(
        bash_exit_signal(None, "Command exited with code 0"),
        ExitSignal::Succeeded
    );
    assert_eq!(bash_exit_signal(None, "out"), ExitSignal::Unknown);
    // A status line that is not the last line is part of the output.
    assert_eq!(
        bash_exit_signal(None, "Command exited with code 3\nstill running"),
        ExitSignal::Unknown
    );
    assert_eq!(trailing_status(""), None);
}

#[test]
fn fused_signals_come_from_the_marker_and_a_trailing_exit_line() {
    assert_eq!(
        fused_exit_signal(ThenRunMarker::Failed, "ok"),
        ExitSignal::Failed
    );
    assert_eq!(
        fused_exit_signal(ThenRunMarker::Succeeded, "ok"),
        ExitSignal::Succeeded
    );
    assert_eq!(
        fused_exit_signal(ThenRunMarker::Succeeded, "ok\nCommand exited with code 4"),
        ExitSignal::Failed
    );
    assert_eq!(
        fused_exit_signal(ThenRunMarker::Succeeded, "ok\nCommand exited with code 0"),
        ExitSignal::Succeeded
    );
    // Only an exit line counts after a success marker.
    assert_eq!(
        fused_exit_signal(ThenRunMarker::Succeeded, "ok\nCommand aborted"),
        ExitSignal::Succeeded
    );
}

#[test]
fn signals_contradict_the_error_flag_only_when_they_disagree() {
    assert!(ExitSignal::Failed.contradicts(false));
    assert!(ExitSignal::Succeeded.contradicts(true));
    assert!(!ExitSignal::Failed.contradicts(true));
    assert!(!ExitSignal::Succeeded.contradicts(false));
    assert!(!ExitSignal::Unknown.contradicts(true));
    assert!(!ExitSignal::Unknown.contradicts(false));
}

#[test]
fn the_status_line_is_split_only_after_a_blank_line_at_the_end() {
    let cases = [
        (
            "out\nerr\n\n\nCommand exited with code 3",
            "out\nerr\n",
            Some("Command exited with code 3"),
        ),
        (
            "out\n\nCommand exited with code 7",
            "out",
            Some("Command exited with code 7"),
        ),
        (
            "out\n\nCommand timed out after 1 seconds\n",
            "out",
            Some("Command timed out after 1 seconds"),
        ),
        ("out\r\n\r\nCommand aborted", "out", Some("Command aborted")),
        (
            "\n\nCommand terminated without an exit code",
            "",
            Some("Command terminated without an exit code"),
        ),
        (
            "out\nCommand exited with code 3",
            "out\nCommand exited with code 3",
            None,
        ),
        (
            "Command exited with code 3",
            "Command exited with code 3",
            None,
        ),
        (
            "Command exited with code 3\n\nmore output",
            "Command exited with code 3\n\nmore output",
            None,
        ),
        ("out", "out", None),
        ("", "", None),
    ];
    for (text, log, status) in cases {
        assert_eq!(split_status_line(text), (log, status), "{text:?}");
    }
}
