//! A seeded generator of synthetic SWF traces, shaped like real ones: half
//! the jobs serial (or another share), the rest of power-of-two widths up
//! to a maximum; log-uniform run times; users' estimates above the run
//! time; arrivals as a Poisson process whose rate gives a target load
//! (above 1: overload, the queue grows) on a given number of processors.
//! A share of jobs may ask for more processors than the maximum width, to
//! stand for jobs that fit nowhere (they do not count toward the load).
//! The same settings and seed give the same trace.

use std::io::Write;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::swf::SwfRecord;

/// The most jobs one synthetic trace may have.
pub const MAX_JOBS: u64 = 100_000_000;

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticTrace {
    /// How many jobs.
    pub jobs: u64,
    /// Processors of the machine the load is aimed at.
    pub processors: u32,
    /// The widest job, in processors (at most `processors`).
    pub max_width: u32,
    /// Target load: the fraction of the processors' time the jobs ask for
    /// (above 1: overload; the queue grows).
    pub load: f64,
    /// Shortest run time, in seconds.
    pub min_run_time: f64,
    /// Longest run time, in seconds.
    pub max_run_time: f64,
    /// Users (IDs 1..=users).
    pub users: u32,
    /// The seed.
    pub seed: u64,
    /// The share of serial (one-processor) jobs; the others spread evenly
    /// over the power-of-two widths up to `max_width` (one among them).
    pub serial: f64,
    /// The share of jobs wider than `max_width`, asking `unfit_width`
    /// processors: on machines no larger than `max_width` they fit
    /// nowhere. The load counts the other jobs only.
    pub unfit: f64,
    /// The width of those jobs (above `max_width`).
    pub unfit_width: u32,
}

/// The widest job the generator writes.
pub const MAX_WIDTH: u32 = 1 << 20;

impl Default for SyntheticTrace {
    fn default() -> Self {
        SyntheticTrace {
            jobs: 10_000,
            processors: 32,
            max_width: 16,
            load: 0.74,
            min_run_time: 10.0,
            max_run_time: 600.0,
            users: 20,
            seed: 1,
            serial: 0.5,
            unfit: 0.0,
            unfit_width: 32,
        }
    }
}

/// Why a trace cannot be generated.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GenerateError {
    /// A setting is out of range.
    #[error("{field}: {reason}")]
    Invalid {
        /// The setting.
        field: &'static str,
        /// Why.
        reason: String,
    },
}

impl SyntheticTrace {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), GenerateError> {
        let invalid = |field, reason: &str| {
            Err(GenerateError::Invalid {
                field,
                reason: reason.to_owned(),
            })
        };
        if self.jobs > MAX_JOBS {
            return invalid("jobs", &format!("at most {MAX_JOBS}"));
        }
        if self.processors == 0 {
            return invalid("processors", "at least 1");
        }
        if self.max_width == 0 || self.max_width > self.processors {
            return invalid("max_width", "between 1 and the processors");
        }
        if !(self.load > 0.0 && self.load <= 100.0) {
            return invalid("load", "above 0 and at most 100");
        }
        if !(self.min_run_time >= 1.0 && self.max_run_time >= self.min_run_time) {
            return invalid("run time", "1 s <= min <= max");
        }
        if self.max_run_time > 1e9 {
            return invalid("max_run_time", "at most 1e9 s");
        }
        if self.users == 0 {
            return invalid("users", "at least 1");
        }
        if !(0.0..=1.0).contains(&self.serial) {
            return invalid("serial", "a share between 0 and 1");
        }
        if !(0.0..1.0).contains(&self.unfit) {
            return invalid("unfit", "a share from 0 up to (not including) 1");
        }
        if self.unfit > 0.0 && !(self.max_width < self.unfit_width && self.unfit_width <= MAX_WIDTH)
        {
            return invalid(
                "unfit_width",
                &format!("wider than max_width and at most {MAX_WIDTH}"),
            );
        }
        Ok(())
    }

    /// The trace's records, generated one at a time.
    pub fn records(&self) -> Result<impl Iterator<Item = SwfRecord> + use<>, GenerateError> {
        self.validate()?;
        let settings = self.clone();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let widths = widths(self.max_width);
        let mean_area = mean_area(&widths, self.serial, self.min_run_time, self.max_run_time);
        // Jobs that fit nowhere add arrivals but no load.
        let mean_gap = mean_area * (1.0 - self.unfit) / (self.load * f64::from(self.processors));
        let mut clock = 0.0f64;
        Ok((1..=self.jobs).map(move |number| {
            // Exponential gaps: a Poisson process at the target rate.
            let uniform: f64 = rng.random();
            clock += -mean_gap * (1.0 - uniform).ln();
            // No draw for the unfit share unless it is asked for, so
            // traces made before it existed come out the same.
            let width = if settings.unfit > 0.0 && rng.random::<f64>() < settings.unfit {
                settings.unfit_width
            } else if rng.random::<f64>() < settings.serial {
                1
            } else {
                widths[rng.random_range(0..widths.len())]
            };
            let span = (settings.max_run_time / settings.min_run_time).ln();
            let run_time = (settings.min_run_time * (span * rng.random::<f64>()).exp()).round();
            let estimate = (run_time * (1.0 + 2.0 * rng.random::<f64>()) / 60.0).ceil() * 60.0;
            SwfRecord {
                job_number: number as i64,
                submit_time: clock.floor(),
                wait_time: -1.0,
                run_time,
                allocated_processors: i64::from(width),
                average_cpu_time: -1.0,
                used_memory: -1.0,
                requested_processors: i64::from(width),
                requested_time: estimate,
                requested_memory: -1.0,
                status: 1,
                user_id: i64::from(rng.random_range(1..=settings.users)),
                group_id: 1,
                executable: -1,
                queue: 1,
                partition: 1,
                preceding_job: -1,
                think_time: -1.0,
            }
        }))
    }

    /// Writes the trace as SWF text, with a header saying how it was made.
    pub fn write(&self, out: &mut impl Write) -> std::io::Result<u64> {
        let records = self
            .records()
            .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidInput, error))?;
        writeln!(out, "; Version: 2.2")?;
        writeln!(out, "; Computer: mcfed synthetic trace")?;
        writeln!(out, "; MaxJobs: {}", self.jobs)?;
        writeln!(out, "; MaxProcs: {}", self.processors)?;
        writeln!(
            out,
            "; Note: seed {} load {} widths 1..{} run times {}..{} s",
            self.seed, self.load, self.max_width, self.min_run_time, self.max_run_time
        )?;
        if self.serial != 0.5 || self.unfit > 0.0 {
            writeln!(
                out,
                "; Note: serial share {}, share {} of width {} (fits nowhere up to {})",
                self.serial, self.unfit, self.unfit_width, self.max_width
            )?;
        }
        let mut count = 0;
        for record in records {
            writeln!(out, "{}", record.to_line())?;
            count += 1;
        }
        Ok(count)
    }
}

/// The wider widths: powers of two up to `max`, and `max` itself.
fn widths(max: u32) -> Vec<u32> {
    let mut widths: Vec<u32> = (0..32)
        .map(|power| 1u32 << power)
        .take_while(|&width| width <= max)
        .collect();
    if widths.last() != Some(&max) {
        widths.push(max);
    }
    widths
}

/// The mean processors × seconds of one job that fits, `serial` of them
/// serial.
fn mean_area(widths: &[u32], serial: f64, min: f64, max: f64) -> f64 {
    let mean_width = serial
        + (1.0 - serial) * widths.iter().map(|&w| f64::from(w)).sum::<f64>() / widths.len() as f64;
    let mean_run = if max > min {
        (max - min) / (max / min).ln()
    } else {
        min
    };
    mean_width * mean_run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swf::SwfReader;

    #[test]
    fn the_same_seed_gives_the_same_trace() {
        let trace = SyntheticTrace {
            jobs: 500,
            ..SyntheticTrace::default()
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        trace.write(&mut a).expect("writes");
        trace.write(&mut b).expect("writes");
        assert_eq!(a, b);
        let other = SyntheticTrace {
            seed: 2,
            ..trace.clone()
        };
        let mut c = Vec::new();
        other.write(&mut c).expect("writes");
        assert_ne!(a, c);
    }

    #[test]
    fn the_load_is_near_the_target() {
        let trace = SyntheticTrace {
            jobs: 20_000,
            load: 0.74,
            ..SyntheticTrace::default()
        };
        let records: Vec<SwfRecord> = trace.records().expect("valid").collect();
        let area: f64 = records
            .iter()
            .map(|r| r.run_time * r.requested_processors as f64)
            .sum();
        let span = records.last().map_or(1.0, |r| r.submit_time);
        let load = area / (span * f64::from(trace.processors));
        assert!((0.65..0.85).contains(&load), "load {load}");
        assert!(records.iter().all(|r| r.requested_processors as u32 <= 16));
        assert!(records.iter().all(|r| r.requested_time >= r.run_time));
        assert!(
            records
                .windows(2)
                .all(|w| w[0].submit_time <= w[1].submit_time)
        );
    }

    #[test]
    fn what_it_writes_reads_back() {
        let trace = SyntheticTrace {
            jobs: 100,
            ..SyntheticTrace::default()
        };
        let mut text = Vec::new();
        assert_eq!(trace.write(&mut text).expect("writes"), 100);
        let mut reader = SwfReader::new("gen.swf", text.as_slice());
        let records: Vec<SwfRecord> = reader.by_ref().map(|r| r.expect("valid")).collect();
        assert_eq!(records.len(), 100);
        assert_eq!(reader.header().get("MaxProcs"), Some("32"));
        let expected: Vec<SwfRecord> = trace.records().expect("valid").collect();
        assert_eq!(records, expected);
    }

    #[test]
    fn unfit_jobs_come_in_their_share_and_leave_the_load_alone() {
        let fitting = SyntheticTrace {
            jobs: 20_000,
            processors: 80,
            max_width: 8,
            load: 1.5,
            ..SyntheticTrace::default()
        };
        let trace = SyntheticTrace {
            unfit: 0.02,
            unfit_width: 16,
            ..fitting.clone()
        };
        let records: Vec<SwfRecord> = trace.records().expect("valid").collect();
        let unfit = records
            .iter()
            .filter(|r| r.requested_processors == 16)
            .count();
        assert!((300..500).contains(&unfit), "{unfit} jobs of 16");
        assert!(
            records
                .iter()
                .all(|r| matches!(r.requested_processors, 1 | 2 | 4 | 8 | 16))
        );
        let area: f64 = records
            .iter()
            .filter(|r| r.requested_processors <= 8)
            .map(|r| r.run_time * r.requested_processors as f64)
            .sum();
        let span = records.last().map_or(1.0, |r| r.submit_time);
        let load = area / (span * 80.0);
        assert!((1.35..1.65).contains(&load), "load {load}");
    }

    #[test]
    fn the_serial_share_is_kept() {
        let trace = SyntheticTrace {
            jobs: 10_000,
            serial: 0.0,
            max_width: 16,
            ..SyntheticTrace::default()
        };
        let serial = trace
            .records()
            .expect("valid")
            .filter(|r| r.requested_processors == 1)
            .count();
        // Only the width-1 fifth of the powers of two.
        assert!((1_700..2_300).contains(&serial), "{serial} serial jobs");
    }

    #[test]
    fn default_shares_draw_as_before() {
        // The default trace's first 20 jobs as written before the serial
        // and unfit shares existed (seed 1): traces and benchmarks made
        // with the earlier flags stay the same.
        let trace = SyntheticTrace {
            jobs: 20,
            ..SyntheticTrace::default()
        };
        let records: Vec<SwfRecord> = trace.records().expect("valid").collect();
        let widths: Vec<i64> = records.iter().map(|r| r.requested_processors).collect();
        assert_eq!(
            widths,
            [1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 4, 1, 8, 1, 2, 8]
        );
        assert_eq!(
            records.last().map(SwfRecord::to_line).as_deref(),
            Some("20 645 -1 58 8 -1 -1 8 180 -1 1 1 1 -1 1 1 -1 -1")
        );
    }

    #[test]
    fn bad_settings_are_refused() {
        let bad = SyntheticTrace {
            max_width: 64,
            ..SyntheticTrace::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(GenerateError::Invalid {
                field: "max_width",
                ..
            })
        ));
        let bad = SyntheticTrace {
            load: 0.0,
            ..SyntheticTrace::default()
        };
        assert!(bad.validate().is_err());
        let bad = SyntheticTrace {
            unfit: 0.1,
            unfit_width: 16,
            ..SyntheticTrace::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(GenerateError::Invalid {
                field: "unfit_width",
                ..
            })
        ));
        let bad = SyntheticTrace {
            serial: 1.5,
            ..SyntheticTrace::default()
        };
        assert!(bad.validate().is_err());
    }
}
