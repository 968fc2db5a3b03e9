//! The live page's server over plain HTTP (issue 29, issue 24 item 7,
//! issue 26 item 6): the Host check ignores case, every answer says
//! `X-Content-Type-Options: nosniff`, the streams are bounded, every
//! stream gets the same bytes, and a normal end is the last frame
//! before the `end` event.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use mcfed_web::{MAX_STREAMS, Web};

fn start() -> (Web, String) {
    let web = Web::start(
        "127.0.0.1:0".parse().expect("address"),
        Duration::from_millis(50),
    )
    .expect("served");
    let address = web.address().to_string();
    (web, address)
}

/// Sends one request naming `host`; the connection, to read from.
fn request(address: &str, method: &str, path: &str, host: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    stream
}

/// Reads until `done` says the text so far is enough, or the answer ends.
fn read_until(stream: &mut TcpStream, done: impl Fn(&str) -> bool) -> String {
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    while let Ok(read) = stream.read(&mut buffer) {
        if read == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..read]);
        if done(&String::from_utf8_lossy(&answer)) {
            break;
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status and headers (lower-cased) of an answer, and its body.
fn head(address: &str, method: &str, path: &str, host: &str) -> (u16, String) {
    let mut stream = request(address, method, path, host);
    let text = read_until(&mut stream, |text| {
        text.contains("\r\n\r\n") && (path != "/events" || text.contains("data:"))
    });
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let headers = text
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_lowercase();
    (status, headers)
}

#[test]
fn the_host_is_matched_whatever_its_case() {
    let (_web, address) = start();
    let port = address.rsplit_once(':').expect("port").1;
    for host in [
        address.clone(),
        format!("LOCALHOST:{port}"),
        format!("LocalHost:{port}"),
        format!("localhost:{port}"),
    ] {
        assert_eq!(head(&address, "GET", "/api/state", &host).0, 200, "{host}");
    }
    assert_eq!(
        head(&address, "GET", "/api/state", "attacker.example").0,
        403
    );
    assert_eq!(
        head(
            &address,
            "GET",
            "/api/state",
            &format!("LOCALHOST.attacker:{port}")
        )
        .0,
        403
    );
}

#[test]
fn every_answer_says_nosniff() {
    let (_web, address) = start();
    for (method, path, host, status) in [
        ("GET", "/", address.as_str(), 200),
        ("GET", "/app.js", address.as_str(), 200),
        ("GET", "/api/state", address.as_str(), 200),
        ("GET", "/events", address.as_str(), 200),
        ("GET", "/nothing", address.as_str(), 404),
        ("POST", "/api/state", address.as_str(), 405),
        ("GET", "/api/state", "attacker.example", 403),
    ] {
        let (got, headers) = head(&address, method, path, host);
        assert_eq!(got, status, "{method} {path} {host}: {headers}");
        assert!(
            headers.contains("x-content-type-options: nosniff"),
            "{method} {path} {host}: {headers}"
        );
    }
}

#[test]
fn streams_are_bounded_and_all_get_the_same_frame() {
    let (_web, address) = start();
    let mut streams: Vec<TcpStream> = Vec::new();
    let mut firsts: Vec<String> = Vec::new();
    for _ in 0..MAX_STREAMS {
        let mut stream = request(&address, "GET", "/events", &address);
        let text = read_until(&mut stream, |text| {
            text.contains("\n\n") && text.contains("data:")
        });
        let first = text
            .lines()
            .find_map(|line| line.strip_prefix("data: "))
            .expect("a first frame")
            .to_owned();
        firsts.push(first);
        streams.push(stream);
    }
    assert!(firsts[0].starts_with("{\"full\":true"), "{}", firsts[0]);
    assert!(firsts.windows(2).all(|pair| pair[0] == pair[1]));
    let (status, _) = head(&address, "GET", "/events", &address);
    assert_eq!(status, 503, "a stream past {MAX_STREAMS}");
    drop(streams);
}

#[test]
fn a_normal_end_is_the_last_frame_then_the_end_event() {
    let (web, address) = start();
    let mut stream = request(&address, "GET", "/events", &address);
    let first = read_until(&mut stream, |text| {
        text.contains("data:") && text.contains("\n\n")
    });
    assert!(first.contains("\"full\":true"), "{first}");
    let finishing = std::thread::spawn(move || web.finish("the run ended"));
    let rest = read_until(&mut stream, |text| text.contains("event: end"));
    finishing.join().expect("finished");
    let frame = rest.find("data: {").expect("a last frame");
    let end = rest
        .find("event: end\ndata: the run ended")
        .expect("the end");
    assert!(frame < end, "{rest}");
}
