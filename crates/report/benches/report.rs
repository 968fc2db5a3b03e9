//! Benchmark of `mcfed report`'s work on 100,000 decision records: parsing
//! the JSON lines, the summary and the timelines.
//!
//! Run: `cargo bench -p mcfed-report --bench report`. The issue asks for a
//! report on 100,000 records in a few seconds; results are in
//! docs/performance.md.

use divan::{Bencher, black_box};
use mcfed_report::{Records, Summary, timelines};

fn main() {
    divan::main();
}

const RECORDS: usize = 100_000;

/// 100,000 decision lines in the shape `mcfed run --report json` writes:
/// three candidates each, a third of them stale, plus an event per job.
fn lines() -> Vec<String> {
    let mut lines = Vec::with_capacity(RECORDS * 2);
    for job in 0..RECORDS {
        let time = job as f64 * 0.5;
        let target = ["q@C2", "q@C3", "q@C4"][job % 3];
        let stale = job % 3 == 0;
        let candidates: Vec<String> = ["q@C2", "q@C3", "q@C4"]
            .iter()
            .map(|queue| {
                format!(
                    r#"{{"queue":"{queue}","priority":40,"total":100,"available":{a},"running":{r},"pending":3,"preemptable_available":{a},"victim_priority":null,"imported_pending":1,"impt_jobbklg":50,"view_age":12.5,"eligible":true,"tier":"free slots","score":{s},"verdict":"{v}","why":"available - pending is {s}, the winner's is 40"}}"#,
                    a = job % 50,
                    r = 100 - job % 50,
                    s = (job % 50) as i64 - 3,
                    v = if *queue == target { "won" } else { "lost" }
                )
            })
            .collect();
        lines.push(format!(
            r#"{{"record":"decision","time":{time},"job":"job{job}","job_id":{job},"cluster":"C1","send_queue":"send","slots":1,"attempt":0,"mode":"COUNT_PREEMPTABLE","outcome":"forwarded","target":"{target}","reason":"{target}: largest available - pending","tier":"free slots","view_age":12.5,"candidates":[{c}],"note":null,"oracle":{{"target":"q@C2","stale":{stale},"differences":[]}}}}"#,
            c = candidates.join(",")
        ));
        lines.push(format!(
            r#"{{"record":"event","time":{t},"cluster":"{cl}","job":"job{job}","job_id":{job},"event":"started","queue":"q","source_cluster":"C1","source_job_id":{job},"detail":null}}"#,
            t = time + 3.0,
            cl = &target[2..]
        ));
    }
    lines
}

#[divan::bench(sample_count = 3)]
fn parse_summarise_timelines(bencher: Bencher) {
    let lines = lines();
    bencher.bench_local(|| {
        let mut records = Records::default();
        for (index, line) in lines.iter().enumerate() {
            records
                .push_line(line, "bench.jsonl", index + 1)
                .expect("valid line");
        }
        let summary = Summary::of(&records);
        let timelines = timelines(&records);
        black_box((summary.decisions, timelines.len()))
    });
}
