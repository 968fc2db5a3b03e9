//! Traces are read the same whether plain or gzip-compressed, and as a
//! stream: a malformed line is reported with its number and reading goes
//! on.

use std::io::Write as _;

use mcfed_trace::{SyntheticTrace, open};

#[test]
fn plain_and_gzip_traces_read_alike() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace = SyntheticTrace {
        jobs: 300,
        ..SyntheticTrace::default()
    };
    let mut text = Vec::new();
    trace.write(&mut text).expect("writes");
    let plain = dir.path().join("trace.swf");
    std::fs::write(&plain, &text).expect("write plain");
    let zipped = dir.path().join("trace.swf.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&zipped).expect("create"),
        flate2::Compression::fast(),
    );
    encoder.write_all(&text).expect("compress");
    encoder.finish().expect("finish");
    let read = |path: &std::path::Path| {
        let mut reader = open(path).expect("opens");
        let records: Vec<_> = reader.by_ref().map(|r| r.expect("valid")).collect();
        (records, reader.header().clone())
    };
    let (a, header_a) = read(&plain);
    let (b, header_b) = read(&zipped);
    assert_eq!(a.len(), 300);
    assert_eq!(a, b);
    assert_eq!(header_a, header_b);
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let Err(error) = open(std::path::Path::new("/no/such/trace.swf")) else {
        panic!("opened a missing file");
    };
    assert!(
        error.to_string().starts_with("/no/such/trace.swf: "),
        "{error}"
    );
}
