//! Writing one `JOB_FINISH` record in LSF 10.1's layout: every field of
//! lsb.acct(5) in order, what [`JobFinish`] holds in its place and LSF's
//! own "unavailable" value elsewhere (`""` for a string, `0` for a time or
//! a number, `-1` for resource usage), as LSF 10.1 logs them.

use std::io::{self, Write};

use super::read::RUSAGE_REST;
use super::{JobFinish, MAX_FIELD_BYTES, MAX_LINE_BYTES, MAX_LIST_ITEMS};

/// Writes `job` as one line of lsb.acct. Line breaks inside a string are
/// written as blanks (a record is one line); a string longer than
/// [`MAX_FIELD_BYTES`], a list longer than [`MAX_LIST_ITEMS`], a line
/// longer than [`MAX_LINE_BYTES`] or a number that is not finite is
/// refused (`InvalidInput`) and nothing is written, so the reader reads
/// back every record the writer writes.
pub fn write_job_finish(out: &mut impl Write, job: &JobFinish) -> io::Result<()> {
    let mut line = Line(String::with_capacity(1024));
    line.string("JOB_FINISH")?;
    line.string(&job.version)?;
    for number in [
        job.event_time,
        job.job_id,
        job.user_id,
        job.options,
        job.num_processors,
        job.submit_time,
        job.begin_time,
        job.term_time,
        job.start_time,
    ] {
        line.int(number);
    }
    for text in [&job.user_name, &job.queue, &job.res_req, &job.depend_cond] {
        line.string(text)?;
    }
    line.string("")?; // preExecCmd
    line.string(&job.from_host)?;
    line.string(&job.cwd)?;
    for _ in ["inFile", "outFile", "errFile"] {
        line.string("")?;
    }
    line.string(&job.job_file)?;
    line.strings(&job.asked_hosts)?;
    line.strings(&job.exec_hosts)?;
    line.int(job.status.into());
    line.float(job.host_factor, 1)?;
    line.string(&job.job_name)?;
    line.string(&job.command)?;
    line.float(job.user_cpu_time, 6)?;
    line.float(job.system_cpu_time, 6)?;
    for _ in RUSAGE_REST {
        line.int(-1);
    }
    middle(&mut line, job)?;
    multicluster_and_tail(&mut line, job)?;
    let mut text = line.0;
    text.push('\n');
    if text.len() > MAX_LINE_BYTES {
        return Err(invalid(format!(
            "job {}: its record would be longer than {MAX_LINE_BYTES} bytes",
            job.job_id
        )));
    }
    out.write_all(text.as_bytes())
}

fn middle(line: &mut Line, job: &JobFinish) -> io::Result<()> {
    line.string("")?; // mailUser
    line.string(&job.project_name)?;
    line.int(job.exit_status.into());
    line.int(job.max_num_processors);
    line.string("")?; // loginShell
    line.string("")?; // timeEvent
    line.int(job.array_index);
    line.int(job.max_rmem);
    line.int(job.max_rswap);
    line.string("")?; // inFileSpool
    line.string("")?; // commandSpool
    line.string(&job.rsv_id)?;
    line.string("")?; // sla
    line.int(0); // exceptMask
    line.string("")?; // additionalInfo
    line.int(job.exit_info.into());
    line.string("")?; // warningAction
    line.int(-1); // warningTimePeriod
    for _ in ["chargedSAAP", "licenseProject", "app", "postExecCmd"] {
        line.string("")?;
    }
    line.int(-1); // runtimeEstimation
    line.string("")?; // jobGroupName
    line.string("")?; // requeueEvalues
    line.int(0); // options2
    line.string("")?; // resizeNotifyCmd
    line.int(0); // lastResizeTime
    line.string(&job.rsv_id)?;
    line.string("")?; // jobDescription
    line.int(0); // submitEXT: no pairs
    line.int(0); // numHostRusage
    line.int(0); // options3
    line.int(job.run_limit);
    line.int(0); // avgMem
    line.string(&job.effective_res_req)
}

fn multicluster_and_tail(line: &mut Line, job: &JobFinish) -> io::Result<()> {
    line.string(&job.src_cluster)?;
    line.int(job.src_job_id);
    line.string(&job.dst_cluster)?;
    line.int(job.dst_job_id);
    line.int(job.forward_time);
    line.string("")?; // flow_id, as LSF 10.1 logs it
    line.int(0); // acJobWaitTime
    line.int(0); // totalProvisionTime
    line.string("")?; // outdir
    line.int(job.run_time);
    line.string("")?; // subcwd
    line.int(0); // num_network
    line.string("")?; // affinity
    line.word("0.000000"); // serial_job_energy
    for _ in ["cpi", "gips", "gbs", "gflops"] {
        line.word("0.00");
    }
    line.strings(&job.alloc_slots)?;
    line.int(-1); // ineligiblePendTime
    line.int(0); // indexRangeCnt
    line.int(0); // requeueTime
    line.int(0); // numGPURusages
    line.int(0); // storageInfoC
    line.int(0); // numKVP
    Ok(())
}

/// A record being written: fields separated by one blank.
struct Line(String);

impl Line {
    fn word(&mut self, word: &str) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        self.0.push_str(word);
    }

    fn int(&mut self, value: i64) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        // itoa: a record has some eighty numbers, and the formatting
        // machinery was most of the writer's time.
        self.0.push_str(itoa::Buffer::new().format(value));
    }

    /// A number with `decimals` places, as LSF's `%f` writes it, unless
    /// that would not read back as the same number.
    fn float(&mut self, value: f64, decimals: usize) -> io::Result<()> {
        if !value.is_finite() {
            return Err(invalid(format!(
                "{value} is not a number lsb.acct can hold"
            )));
        }
        // A whole number (what nearly every such field holds: CPU seconds
        // of an emulated run, -1, a host factor of 1): its digits and
        // zeros, exactly what `{:.N}` writes.
        if value.fract() == 0.0
            && value.abs() < (1u64 << 53) as f64
            && !(value == 0.0 && value.is_sign_negative())
        {
            self.int(value as i64);
            if decimals > 0 {
                self.0.push('.');
                self.0.extend(std::iter::repeat_n('0', decimals));
            }
            return Ok(());
        }
        let fixed = format!("{value:.decimals$}");
        if fixed.parse::<f64>().ok() == Some(value) {
            self.word(&fixed);
        } else {
            self.word(&format!("{value:?}"));
        }
        Ok(())
    }

    /// A quoted string: `"` doubled, line breaks written as blanks.
    fn string(&mut self, text: &str) -> io::Result<()> {
        if text.len() > MAX_FIELD_BYTES {
            return Err(invalid(format!(
                "a field of {} bytes, more than the {MAX_FIELD_BYTES} lsb.acct's readers take",
                text.len()
            )));
        }
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        self.0.push('"');
        if text.contains(['"', '\n', '\r']) {
            for character in text.chars() {
                match character {
                    '"' => self.0.push_str("\"\""),
                    '\n' | '\r' => self.0.push(' '),
                    other => self.0.push(other),
                }
            }
        } else {
            self.0.push_str(text);
        }
        self.0.push('"');
        Ok(())
    }

    /// A count, then each item quoted.
    fn strings(&mut self, items: &[String]) -> io::Result<()> {
        if items.len() > MAX_LIST_ITEMS {
            return Err(invalid(format!(
                "a list of {} items, more than {MAX_LIST_ITEMS}",
                items.len()
            )));
        }
        self.int(items.len() as i64);
        items.iter().try_for_each(|item| self.string(item))
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

#[cfg(test)]
mod tests {
    use super::Line;

    /// The fast path for whole numbers writes what `{:.N}` writes.
    #[test]
    fn whole_numbers_are_written_as_the_formatting_machinery_writes_them() {
        for value in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            3400.0,
            12.5,
            1e15,
            -9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1e300,
            0.1,
        ] {
            for decimals in [0, 1, 6] {
                let mut line = Line(String::new());
                line.float(value, decimals).expect("finite");
                let fixed = format!("{value:.decimals$}");
                let expected = if fixed.parse::<f64>().ok() == Some(value) {
                    fixed
                } else {
                    format!("{value:?}")
                };
                assert_eq!(line.0, expected, "{value} with {decimals} decimals");
            }
        }
        let mut line = Line(String::new());
        line.int(i64::MIN);
        line.int(42);
        assert_eq!(line.0, format!("{} 42", i64::MIN));
    }
}
