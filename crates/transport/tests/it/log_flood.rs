//! Warnings caused from outside are rate-limited (issue 26, item 13): one
//! line per kind per interval, with a count of those not logged. 60,000
//! junk datagrams made about 2,170 WARN lines in 0.6 s.

use crate::common;
use common::{federation, peer, start};

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcfed_transport::WARNING_INTERVAL;

/// Collects what the transport logs.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// The warnings the transport logged.
    fn warnings(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().expect("lock"))
            .lines()
            .filter(|line| line.contains("WARN") && line.contains("mcfed_transport"))
            .map(str::to_owned)
            .collect()
    }
}

/// A generator of junk bytes (xorshift; no need for a random crate).
fn junk(state: &mut u64, out: &mut [u8]) {
    for byte in out {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *byte = *state as u8;
    }
}

#[test]
fn sixty_thousand_junk_datagrams_make_a_few_warnings() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing::Dispatch::new(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish(),
    );
    // Not global: the other tests of this binary run beside it, and their
    // warnings are not this endpoint's. The subscriber is the default of
    // this test's runtime threads (where the endpoint's tasks run) alone.
    let _this_thread = tracing::dispatcher::set_default(&subscriber);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start(move || {
            // For the thread's life: the runtime's threads end with it.
            std::mem::forget(tracing::dispatcher::set_default(&subscriber));
        })
        .build()
        .expect("runtime");
    runtime.block_on(junk_datagrams(captured));
}

async fn junk_datagrams(captured: Captured) {
    let dir = tempfile::tempdir().expect("temp dir");
    federation(dir.path());
    let (one, _events) = start(
        dir.path(),
        "Cluster1",
        vec![peer("Cluster2", "127.0.0.1:9".parse().expect("address"))],
    );
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("socket");
    let started = Instant::now();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut datagram = [0u8; 1200];
    for sent in 0..60_000u32 {
        junk(&mut state, &mut datagram);
        // Half of them look like QUIC v1 Initial packets.
        if sent % 2 == 0 {
            datagram[0] = 0xc0 | (datagram[0] & 0x0f);
            datagram[1..5].copy_from_slice(&1u32.to_be_bytes());
            datagram[5] = 8;
            datagram[14] = 8;
        }
        let _ = socket.send_to(&datagram, one.local_addr());
        if sent % 100 == 0 {
            // Paced, so the endpoint takes (nearly) every one.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    // Let the endpoint take what it was sent.
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let elapsed = started.elapsed();
    let warnings = captured.warnings();
    // Today: hundreds of "connection refused in the TLS handshake". Now:
    // per kind, one line, and one more per interval that passed.
    let per_kind = 1 + (elapsed.as_secs_f64() / WARNING_INTERVAL.as_secs_f64()).ceil() as usize;
    let mut kinds: Vec<&str> = warnings
        .iter()
        .filter_map(|line| line.split("mcfed_transport").nth(1))
        .map(|rest| rest.split(" cluster=").next().unwrap_or(rest))
        .collect();
    kinds.sort_unstable();
    assert!(!kinds.is_empty(), "the junk made no warning at all");
    for kind in kinds
        .iter()
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
    {
        let lines = kinds.iter().filter(|seen| **seen == kind).count();
        assert!(
            lines <= per_kind,
            "{lines} lines of `{kind}` in {elapsed:?}: {:#?}",
            &warnings[..warnings.len().min(5)]
        );
    }
    drop(one);
}
