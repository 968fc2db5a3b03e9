//! The APS value of one job: the formula on given figures, with no cluster
//! behind it, so tests and `bjobs -prio` see exactly what dispatch uses.
//!
//! For each factor F (FS, RSRC, WORK) with weight `W[F]` and limit
//! `L[F]`, and each of its sub-factors s with weight `W[s]` and limit
//! `L[s]`, a job that has pended `p`:
//!
//! ```text
//! sub(s)     = clamp(W[s] × x[s], −L[s], L[s])      if p ≥ GRACE[s], else 0
//! factor(F)  = clamp(W[F] × Σ sub(s), −L[F], L[F])  if p ≥ GRACE[F], else 0
//! factor(FS) = clamp(W[FS] × fs, −L[FS], L[FS])     if p ≥ GRACE[FS] and the queue has FAIRSHARE, else 0
//! APS        = clamp(Σ factor(F) + ADMIN, −1000000, 1000000)
//! ```
//!
//! where x is the job's PROC (slots; `-n min,max`: the max), MEM and SWAP
//! (MB asked for), JPRIORITY and QPRIORITY, and fs the user's dynamic
//! priority. Limits apply to each sub-factor first, then to its factor,
//! then APS_PRIORITY's maximum to the whole. ADMIN (`bmod -aps
//! "admin=V"`) has no weight, limit or grace period.

use std::time::Duration;

use super::config::{APS_MAX, ApsTerm, ResolvedAps};

/// What the formula reads of one job.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ApsInputs {
    /// The user's dynamic priority in the job's queue; `None` when the
    /// queue has no FAIRSHARE (the FS factor is then ignored).
    pub fs: Option<f64>,
    /// PROC: slots asked for.
    pub proc: f64,
    /// MEM: memory asked for, MB.
    pub mem: f64,
    /// SWAP: swap asked for, MB.
    pub swap: f64,
    /// JPRIORITY.
    pub jpriority: f64,
    /// QPRIORITY.
    pub qpriority: f64,
    /// How long the job has pended (what grace periods are measured
    /// against).
    pub pended: Duration,
    /// ADMIN: `bmod -aps "admin=V"`, 0 when unset.
    pub admin: f64,
}

impl ApsInputs {
    /// The figure a term reads (a factor's own figure is only FS's).
    pub fn figure(&self, term: ApsTerm) -> f64 {
        match term {
            ApsTerm::Fs => self.fs.unwrap_or(0.0),
            ApsTerm::Proc => self.proc,
            ApsTerm::Mem => self.mem,
            ApsTerm::Swap => self.swap,
            ApsTerm::JPriority => self.jpriority,
            ApsTerm::QPriority => self.qpriority,
            ApsTerm::Rsrc | ApsTerm::Work => 0.0,
        }
    }
}

/// A job's APS value with its parts, as `bjobs -prio` shows them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ApsBreakdown {
    /// The figures read, by [`ApsTerm::index`] (0 for RSRC and WORK).
    pub figures: [f64; 8],
    /// What each term contributes after its weight, limit and grace
    /// period, by [`ApsTerm::index`]: a sub-factor's weighted value, a
    /// factor's (its sub-factors' sum, weighted and limited).
    pub terms: [f64; 8],
    /// ADMIN.
    pub admin: f64,
    /// The APS value: the factors' sum plus ADMIN, within ±1,000,000.
    pub value: f64,
}

/// `weight × figure`, within ±`limit`; 0 before the grace period ends.
fn weighted(weight: f64, figure: f64, limit: f64, grace: Duration, pended: Duration) -> f64 {
    if weight == 0.0 || pended < grace {
        return 0.0;
    }
    let value = weight * figure;
    if value.is_nan() {
        0.0
    } else {
        value.clamp(-limit, limit)
    }
}

/// The APS value of a job with `inputs` under `aps`, with its parts.
pub fn aps_value(aps: &ResolvedAps, inputs: &ApsInputs) -> ApsBreakdown {
    let mut breakdown = ApsBreakdown {
        admin: inputs.admin,
        ..ApsBreakdown::default()
    };
    for term in ApsTerm::ALL {
        breakdown.figures[term.index()] = inputs.figure(term);
    }
    let terms = &mut breakdown.terms;
    breakdown.value = evaluate(aps, inputs, |at, value| terms[at] = value);
    breakdown
}

/// The APS value alone: what a dispatch pass ranks by, without the
/// parts `bjobs -prio` shows (the same evaluation as [`aps_value`]).
pub(crate) fn aps_value_only(aps: &ResolvedAps, inputs: &ApsInputs) -> f64 {
    evaluate(aps, inputs, |_, _| {})
}

/// The formula, telling `note` what each term (by [`ApsTerm::index`])
/// contributes.
#[inline]
fn evaluate(aps: &ResolvedAps, inputs: &ApsInputs, mut note: impl FnMut(usize, f64)) -> f64 {
    let mut total = 0.0;
    for factor in ApsTerm::FACTORS {
        let index = factor.index();
        let figure = match factor {
            ApsTerm::Fs => match inputs.fs {
                Some(fs) => fs,
                None => continue,
            },
            _ => {
                let mut sum = 0.0;
                for &child in factor.children() {
                    let at = child.index();
                    let value = weighted(
                        aps.weight[at],
                        inputs.figure(child),
                        aps.limit[at],
                        aps.grace[at],
                        inputs.pended,
                    );
                    note(at, value);
                    sum += value;
                }
                sum
            }
        };
        let value = weighted(
            aps.weight[index],
            figure,
            aps.limit[index],
            aps.grace[index],
            inputs.pended,
        );
        note(index, value);
        total += value;
    }
    let value = total + inputs.admin;
    if value.is_nan() {
        0.0
    } else {
        value.clamp(-APS_MAX, APS_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aps::ApsPriority;

    fn resolved(text: &str) -> ResolvedAps {
        text.parse::<ApsPriority>().expect("valid").resolve()
    }

    #[test]
    fn the_value_alone_is_the_breakdowns() {
        let aps = resolved(
            "WEIGHT[[FS, 3] [RSRC, 2] [PROC, 10] [JPRIORITY, 1]] LIMIT[[PROC, 30]] GRACE_PERIOD[[JPRIORITY, 5m]]",
        );
        for (pended, fs) in [
            (0, None),
            (299, Some(0.25)),
            (300, Some(-4.0)),
            (900, Some(f64::NAN)),
        ] {
            let inputs = ApsInputs {
                fs,
                proc: 4.0,
                jpriority: 70.0,
                admin: 1.5,
                pended: Duration::from_secs(pended),
                ..ApsInputs::default()
            };
            assert_eq!(
                aps_value_only(&aps, &inputs).to_bits(),
                aps_value(&aps, &inputs).value.to_bits(),
                "pended {pended}s"
            );
        }
    }

    #[test]
    fn lsf_example_work_factor() {
        // 1 × (1 × job_priority + 10 × queue_priority)
        let aps = resolved("WEIGHT [[JPRIORITY, 1] [QPRIORITY, 10]]");
        let inputs = ApsInputs {
            jpriority: 50.0,
            qpriority: 30.0,
            ..ApsInputs::default()
        };
        let breakdown = aps_value(&aps, &inputs);
        assert_eq!(breakdown.value, 350.0);
        assert_eq!(breakdown.terms[ApsTerm::Work.index()], 350.0);
        assert_eq!(breakdown.terms[ApsTerm::QPriority.index()], 300.0);
    }

    #[test]
    fn limits_apply_to_sub_factors_then_factors_then_the_maximum() {
        let aps = resolved("WEIGHT[[RSRC, 2] [PROC, 10] [MEM, 1]] LIMIT[[PROC, 30] [RSRC, 100]]");
        let inputs = ApsInputs {
            proc: 8.0,
            mem: 45.0,
            ..ApsInputs::default()
        };
        // PROC: 80 limited to 30; MEM 45; RSRC 2 × 75 = 150 limited to 100.
        let breakdown = aps_value(&aps, &inputs);
        assert_eq!(breakdown.terms[ApsTerm::Proc.index()], 30.0);
        assert_eq!(breakdown.terms[ApsTerm::Rsrc.index()], 100.0);
        assert_eq!(breakdown.value, 100.0);
        let huge = aps_value(
            &resolved("WEIGHT[[MEM, 1000000]]"),
            &ApsInputs {
                mem: 4096.0,
                ..ApsInputs::default()
            },
        );
        assert_eq!(huge.value, APS_MAX);
    }

    #[test]
    fn grace_periods_hold_terms_back() {
        let aps = resolved("WEIGHT[[JPRIORITY, 1] [QPRIORITY, 10]] GRACE_PERIOD[[QPRIORITY, 10m]]");
        let mut inputs = ApsInputs {
            jpriority: 5.0,
            qpriority: 3.0,
            pended: Duration::from_secs(599),
            ..ApsInputs::default()
        };
        assert_eq!(aps_value(&aps, &inputs).value, 5.0);
        inputs.pended = Duration::from_secs(600);
        assert_eq!(aps_value(&aps, &inputs).value, 35.0);
    }

    #[test]
    fn fs_is_ignored_without_fairshare_and_admin_is_added_as_is() {
        let aps = resolved("WEIGHT[[FS, 100] [JPRIORITY, 1]]");
        let inputs = ApsInputs {
            fs: None,
            jpriority: 7.0,
            admin: -2.5,
            ..ApsInputs::default()
        };
        assert_eq!(aps_value(&aps, &inputs).value, 4.5);
        let with_fs = ApsInputs {
            fs: Some(0.5),
            ..inputs
        };
        assert_eq!(aps_value(&aps, &with_fs).value, 54.5);
    }
}
