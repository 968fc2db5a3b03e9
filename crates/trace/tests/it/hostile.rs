//! Traces that would change what is read without a word, or never end
//! (issue 26, items 5, 7, 9, 10): a truncated gzip ends the read with one
//! located error; submit times that go backwards are sorted within a
//! window or refused with their line, never rewritten; submit times past a
//! hundred years are refused with their line; a device, or a link to one,
//! is refused before a byte is read; input with no line breaks ends the
//! read.

use std::io::Write as _;

use mcfed_trace::{SubmitOrder, SwfError, SwfReader, SwfRecord, SyntheticTrace, open};

/// A job line submitted at `submit` seconds, numbered `job`.
fn line(job: u64, submit: &str) -> String {
    format!("{job} {submit} 0 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n")
}

fn read(text: &str, order: SubmitOrder) -> Vec<Result<SwfRecord, SwfError>> {
    SwfReader::new("t.swf", text.as_bytes())
        .with_order(order)
        .collect()
}

fn jobs(read: &[Result<SwfRecord, SwfError>]) -> Vec<i64> {
    read.iter()
        .filter_map(|record| record.as_ref().ok())
        .map(|record| record.job_number)
        .collect()
}

#[test]
fn a_truncated_gzip_trace_ends_with_one_located_error() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = SyntheticTrace {
        jobs: 2000,
        ..SyntheticTrace::default()
    };
    let mut text = Vec::new();
    trace.write(&mut text).expect("writes");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&text).expect("compress");
    let zipped = encoder.finish().expect("finish");
    let path = dir.path().join("trace.swf.gz");
    std::fs::write(&path, &zipped[..zipped.len() / 2]).expect("cut");
    // Today's reader retried the failed read forever: millions of errors.
    let items: Vec<_> = open(&path).expect("opens").take(100_000).collect();
    let errors: Vec<&SwfError> = items
        .iter()
        .filter_map(|item| item.as_ref().err())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let SwfError::Read { line, .. } = errors[0] else {
        panic!("not a read error: {}", errors[0]);
    };
    let message = errors[0].to_string();
    assert!(
        message.starts_with(&format!("{}:{line}: ", path.display())),
        "{message}"
    );
    assert!(message.contains("cut short"), "{message}");
    assert!(items.len() < 2000);
}

#[test]
fn backward_submit_times_are_sorted_within_the_window() {
    let text = [
        line(1, "0"),
        line(2, "50"),
        line(3, "20"),
        line(4, "50"),
        line(5, "60"),
    ]
    .concat();
    let read = read(&text, SubmitOrder::Sort { window: 3 });
    assert!(read.iter().all(Result::is_ok));
    assert_eq!(jobs(&read), vec![1, 3, 2, 4, 5]);
    let times: Vec<f64> = read
        .iter()
        .map(|record| record.as_ref().expect("valid").submit_time)
        .collect();
    assert_eq!(times, vec![0.0, 20.0, 50.0, 50.0, 60.0], "no time changed");
    // The default window sorts it too.
    let default: Vec<_> = SwfReader::new("t.swf", text.as_bytes()).collect();
    assert_eq!(jobs(&default), vec![1, 3, 2, 4, 5]);
}

#[test]
fn a_job_earlier_than_the_window_reaches_is_refused_with_its_line() {
    let text = [line(1, "10"), line(2, "20"), line(3, "30"), line(4, "5")].concat();
    let read = read(&text, SubmitOrder::Sort { window: 2 });
    assert_eq!(jobs(&read), vec![1, 2, 3]);
    let error = read
        .iter()
        .find_map(|record| record.as_ref().err())
        .expect("refused");
    assert_eq!(
        error.to_string(),
        "t.swf:4: field 2 (submit time): 5 s is earlier than 20 s on line 2, a job already let out of the sorting window of 2 jobs: refused (submit times must not go backwards)"
    );
}

#[test]
fn refusing_order_refuses_every_backward_job_with_its_line() {
    let text = [line(1, "0"), line(2, "50"), line(3, "20"), line(4, "60")].concat();
    let read = read(&text, SubmitOrder::Refuse);
    assert_eq!(jobs(&read), vec![1, 2, 4]);
    let error = read[2].as_ref().expect_err("refused");
    assert_eq!(
        error.to_string(),
        "t.swf:3: field 2 (submit time): 20 s is earlier than 50 s on line 2: refused (submit times must not go backwards)"
    );
}

#[test]
fn submit_times_past_a_hundred_years_are_refused_with_their_line() {
    let text = [
        line(1, "0"),
        line(2, "99999999999999999999"),
        line(3, "3153600000"),
    ]
    .concat();
    for order in [SubmitOrder::Refuse, SubmitOrder::default()] {
        let read = read(&text, order);
        assert_eq!(
            jobs(&read),
            vec![1, 3],
            "a hundred years to the second is in"
        );
        let error = read
            .iter()
            .find_map(|record| record.as_ref().err())
            .expect("refused");
        assert_eq!(
            error.to_string(),
            "t.swf:2: field 2 (submit time): 100000000000000000000 s is out of bounds: mcfed accepts 0 to 3153600000 s (a hundred years of emulated time)"
        );
    }
}

#[test]
fn a_device_or_a_link_to_one_is_refused_before_a_byte_is_read() {
    let Err(error) = open(std::path::Path::new("/dev/zero")) else {
        panic!("opened a device");
    };
    assert!(matches!(error, SwfError::NotAFile(_)), "{error}");
    assert!(error.to_string().contains("not a regular file"), "{error}");
    let dir = tempfile::tempdir().expect("temporary directory");
    let link = dir.path().join("trace.swf");
    std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
    assert!(matches!(open(&link), Err(SwfError::NotAFile(_))));
}

#[test]
fn input_without_line_breaks_ends_the_read() {
    use std::io::Read as _;
    // A gigabyte of zeros, as a sparse file gives them: one error, after
    // at most MAX_UNBROKEN_BYTES, and the read ends.
    let zeros = std::io::repeat(0).take(1 << 30);
    let items: Vec<_> = SwfReader::new("zeros", std::io::BufReader::new(zeros))
        .take(10)
        .collect();
    assert_eq!(items.len(), 1, "{items:?}");
    assert!(
        matches!(items[0], Err(SwfError::NotText { line: 1, .. })),
        "{items:?}"
    );
}
