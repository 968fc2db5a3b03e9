//! APS_PRIORITY as lsb.queues writes it:
//! `WEIGHT[[factor, value] [subfactor, value] ...] LIMIT[[...]]
//! GRACE_PERIOD[[...]]`, parsed into an [`ApsPriority`] and resolved into
//! the weights, limits and grace periods the formula uses
//! ([`ResolvedAps`]). Every refusal says which section and factor is at
//! fault, in an administrator's words.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// LSF's largest APS_PRIORITY value (lsb.queues: "The maximum value of
/// APS_PRIORITY is 1000000.00"). mcfed caps a job's calculated APS value
/// at it (and at its negative below) and refuses a WEIGHT, LIMIT or `bmod
/// -aps` value beyond it.
pub const APS_MAX: f64 = 1_000_000.0;

/// A factor or sub-factor of APS_PRIORITY.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApsTerm {
    /// FS: the user's dynamic priority in the queue's user-based fairshare.
    Fs,
    /// RSRC: the resources the job asks for (PROC, MEM, SWAP).
    Rsrc,
    /// PROC: the slots the job asks for (`-n min,max`: the max).
    Proc,
    /// MEM: the memory the job asks for, MB.
    Mem,
    /// SWAP: the swap space the job asks for, MB.
    Swap,
    /// WORK: the job's attributes (JPRIORITY, QPRIORITY).
    Work,
    /// JPRIORITY: the job's priority (`-sp`, MAX_USER_PRIORITY/2,
    /// escalated by JOB_PRIORITY_OVER_TIME).
    JPriority,
    /// QPRIORITY: the PRIORITY of the job's queue.
    QPriority,
}

impl ApsTerm {
    /// Every term, in the order of the arrays indexed by [`ApsTerm::index`].
    pub const ALL: [ApsTerm; 8] = [
        ApsTerm::Fs,
        ApsTerm::Rsrc,
        ApsTerm::Proc,
        ApsTerm::Mem,
        ApsTerm::Swap,
        ApsTerm::Work,
        ApsTerm::JPriority,
        ApsTerm::QPriority,
    ];

    /// The factors (terms with no parent), in order.
    pub const FACTORS: [ApsTerm; 3] = [ApsTerm::Fs, ApsTerm::Rsrc, ApsTerm::Work];

    /// Its name in APS_PRIORITY.
    pub fn name(self) -> &'static str {
        match self {
            ApsTerm::Fs => "FS",
            ApsTerm::Rsrc => "RSRC",
            ApsTerm::Proc => "PROC",
            ApsTerm::Mem => "MEM",
            ApsTerm::Swap => "SWAP",
            ApsTerm::Work => "WORK",
            ApsTerm::JPriority => "JPRIORITY",
            ApsTerm::QPriority => "QPRIORITY",
        }
    }

    /// Its place in the arrays of [`ApsPriority`] and [`ResolvedAps`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The factor a sub-factor belongs to; `None` for a factor.
    pub fn parent(self) -> Option<ApsTerm> {
        match self {
            ApsTerm::Proc | ApsTerm::Mem | ApsTerm::Swap => Some(ApsTerm::Rsrc),
            ApsTerm::JPriority | ApsTerm::QPriority => Some(ApsTerm::Work),
            ApsTerm::Fs | ApsTerm::Rsrc | ApsTerm::Work => None,
        }
    }

    /// The sub-factors of a factor (none for FS and for sub-factors).
    pub fn children(self) -> &'static [ApsTerm] {
        match self {
            ApsTerm::Rsrc => &[ApsTerm::Proc, ApsTerm::Mem, ApsTerm::Swap],
            ApsTerm::Work => &[ApsTerm::JPriority, ApsTerm::QPriority],
            _ => &[],
        }
    }

    /// The term named `name` (any case).
    pub fn from_name(name: &str) -> Option<ApsTerm> {
        ApsTerm::ALL
            .into_iter()
            .find(|term| term.name().eq_ignore_ascii_case(name))
    }
}

/// One section of APS_PRIORITY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApsSection {
    /// WEIGHT.
    Weight,
    /// LIMIT.
    Limit,
    /// GRACE_PERIOD.
    GracePeriod,
}

impl ApsSection {
    /// Its name in APS_PRIORITY.
    pub fn name(self) -> &'static str {
        match self {
            ApsSection::Weight => "WEIGHT",
            ApsSection::Limit => "LIMIT",
            ApsSection::GracePeriod => "GRACE_PERIOD",
        }
    }

    fn from_name(name: &str) -> Option<ApsSection> {
        [
            ApsSection::Weight,
            ApsSection::Limit,
            ApsSection::GracePeriod,
        ]
        .into_iter()
        .find(|section| section.name().eq_ignore_ascii_case(name))
    }
}

/// APS_PRIORITY as written: the weight, limit and grace period given for
/// each term (by [`ApsTerm::index`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApsPriority {
    /// WEIGHT.
    pub weight: [Option<f64>; 8],
    /// LIMIT.
    pub limit: [Option<f64>; 8],
    /// GRACE_PERIOD.
    pub grace: [Option<Duration>; 8],
}

/// Why an APS_PRIORITY value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ApsParseError(pub String);

fn refuse<T>(message: impl Into<String>) -> Result<T, ApsParseError> {
    Err(ApsParseError(message.into()))
}

/// A cursor over the text of APS_PRIORITY.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn skip_space(&mut self) {
        while self.text[self.at..].starts_with(char::is_whitespace) {
            self.at += self.text[self.at..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
        }
    }

    fn done(&mut self) -> bool {
        self.skip_space();
        self.at >= self.text.len()
    }

    fn eat(&mut self, wanted: char) -> bool {
        self.skip_space();
        if self.text[self.at..].starts_with(wanted) {
            self.at += wanted.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, wanted: char, context: &str) -> Result<(), ApsParseError> {
        if self.eat(wanted) {
            Ok(())
        } else {
            let rest: String = self.text[self.at..].chars().take(12).collect();
            refuse(format!(
                "expected `{wanted}` {context}, found `{}`",
                if rest.is_empty() { "the end" } else { &rest }
            ))
        }
    }

    /// The next word: up to whitespace, a bracket or a comma.
    fn word(&mut self) -> &'a str {
        self.skip_space();
        let rest = &self.text[self.at..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '[' | ']' | ','))
            .unwrap_or(rest.len());
        self.at += end;
        &rest[..end]
    }
}

impl FromStr for ApsPriority {
    type Err = ApsParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut aps = ApsPriority::default();
        let mut seen: Vec<ApsSection> = Vec::new();
        let mut cursor = Cursor { text, at: 0 };
        while !cursor.done() {
            let name = cursor.word();
            let Some(section) = ApsSection::from_name(name) else {
                return refuse(format!(
                    "unknown section `{name}`: APS_PRIORITY takes WEIGHT[[...]], LIMIT[[...]] and GRACE_PERIOD[[...]]"
                ));
            };
            if seen.contains(&section) {
                return refuse(format!("{} is given twice", section.name()));
            }
            seen.push(section);
            aps.section(&mut cursor, section)?;
        }
        if seen.is_empty() {
            return refuse("APS_PRIORITY is empty: give at least WEIGHT[[factor, value] ...]");
        }
        aps.check_counted()?;
        Ok(aps)
    }
}

impl ApsPriority {
    /// One section's `[[term, value] ...]`.
    fn section(
        &mut self,
        cursor: &mut Cursor<'_>,
        section: ApsSection,
    ) -> Result<(), ApsParseError> {
        let context = format!("after {}", section.name());
        cursor.expect('[', &context)?;
        let mut entries = 0;
        while !cursor.eat(']') {
            cursor.expect('[', &format!("to open an entry of {}", section.name()))?;
            let name = cursor.word();
            cursor.expect(',', &format!("after `{name}` in {}", section.name()))?;
            let value = cursor.word();
            cursor.expect(
                ']',
                &format!("after `{name}, {value}` in {}", section.name()),
            )?;
            self.entry(section, name, value)?;
            entries += 1;
        }
        if entries == 0 {
            return refuse(format!("{} lists no factor", section.name()));
        }
        Ok(())
    }

    /// One `[term, value]` of `section`.
    fn entry(&mut self, section: ApsSection, name: &str, value: &str) -> Result<(), ApsParseError> {
        let Some(term) = ApsTerm::from_name(name) else {
            if name.eq_ignore_ascii_case("ADMIN") {
                return refuse(format!(
                    "ADMIN takes no {}: an administrator sets it per job with bmod -aps \"admin=V\", and it is added to the calculated value as it is",
                    section.name()
                ));
            }
            let known: Vec<&str> = ApsTerm::ALL.iter().map(|term| term.name()).collect();
            return refuse(format!(
                "unknown factor `{name}` in {} (known: {})",
                section.name(),
                known.join(", ")
            ));
        };
        let index = term.index();
        let duplicate = match section {
            ApsSection::Weight => self.weight[index].is_some(),
            ApsSection::Limit => self.limit[index].is_some(),
            ApsSection::GracePeriod => self.grace[index].is_some(),
        };
        if duplicate {
            return refuse(format!("{name} is given twice in {}", section.name()));
        }
        match section {
            ApsSection::GracePeriod => {
                self.grace[index] = Some(grace_period(name, value)?);
            }
            ApsSection::Weight | ApsSection::Limit => {
                let number = number(section, name, value)?;
                if section == ApsSection::Limit && number < 0.0 {
                    return refuse(format!(
                        "LIMIT of {name} is {value}: a limit bounds the absolute value of the weighted factor and must be positive"
                    ));
                }
                if section == ApsSection::Weight {
                    self.weight[index] = Some(number);
                } else {
                    self.limit[index] = Some(number);
                }
            }
        }
        Ok(())
    }

    /// A LIMIT or GRACE_PERIOD for a term the weights do not count is
    /// refused (it would have no effect).
    fn check_counted(&self) -> Result<(), ApsParseError> {
        let resolved = self.resolve();
        if ApsTerm::FACTORS
            .iter()
            .all(|factor| resolved.weight[factor.index()] == 0.0)
        {
            return refuse("APS_PRIORITY needs a WEIGHT for at least one factor or sub-factor");
        }
        for term in ApsTerm::ALL {
            let index = term.index();
            if resolved.weight[index] != 0.0 {
                continue;
            }
            for (section, given) in [
                (ApsSection::Limit, self.limit[index].is_some()),
                (ApsSection::GracePeriod, self.grace[index].is_some()),
            ] {
                if given {
                    return refuse(format!(
                        "{} names {}, which no WEIGHT counts",
                        section.name(),
                        term.name()
                    ));
                }
            }
        }
        Ok(())
    }

    /// The weights, limits and grace periods the formula uses:
    ///
    /// - a sub-factor with a weight whose factor has none gives its factor
    ///   the weight 1 (LSF's rule);
    /// - a factor with a weight whose sub-factors have none counts each of
    ///   its sub-factors with weight 1 (mcfed's choice);
    /// - a term with no weight counts nothing; no limit is no bound; no
    ///   grace period counts the term at once.
    pub fn resolve(&self) -> ResolvedAps {
        let mut weight = [0.0; 8];
        for factor in ApsTerm::FACTORS {
            let children = factor.children();
            let any_child = children
                .iter()
                .any(|child| self.weight[child.index()].is_some());
            let own = self.weight[factor.index()];
            weight[factor.index()] = match own {
                Some(value) => value,
                None if any_child => 1.0,
                None => 0.0,
            };
            for child in children {
                weight[child.index()] = match self.weight[child.index()] {
                    Some(value) => value,
                    None if own.is_some() && !any_child => 1.0,
                    None => 0.0,
                };
            }
        }
        ResolvedAps {
            weight,
            limit: std::array::from_fn(|index| self.limit[index].unwrap_or(f64::INFINITY)),
            grace: std::array::from_fn(|index| self.grace[index].unwrap_or_default()),
        }
    }
}

/// A WEIGHT or LIMIT value: a non-zero number within ±[`APS_MAX`].
fn number(section: ApsSection, name: &str, value: &str) -> Result<f64, ApsParseError> {
    let Ok(number) = value.parse::<f64>() else {
        return refuse(format!(
            "{} of {name} is `{value}`, not a number",
            section.name()
        ));
    };
    if !number.is_finite() {
        return refuse(format!(
            "{} of {name} must be a finite number",
            section.name()
        ));
    }
    if number == 0.0 {
        return refuse(format!(
            "{} of {name} is 0: zero is not allowed for any WEIGHT, LIMIT or GRACE_PERIOD (leave the factor out instead)",
            section.name()
        ));
    }
    if number.abs() > APS_MAX {
        return refuse(format!(
            "{} of {name} is {value}: APS_PRIORITY's values are at most 1000000 (its documented maximum)",
            section.name()
        ));
    }
    Ok(number)
}

/// A GRACE_PERIOD value: `N` (hours), `Ns`, `Nm` or `Nh`, more than zero.
fn grace_period(name: &str, value: &str) -> Result<Duration, ApsParseError> {
    let (digits, unit) = match value.char_indices().last() {
        Some((at, c)) if c.is_ascii_alphabetic() => (&value[..at], c.to_ascii_lowercase()),
        _ => (value, 'h'),
    };
    let seconds_per = match unit {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3600.0,
        _ => {
            return refuse(format!(
                "GRACE_PERIOD of {name} is `{value}`: give seconds (`30s`), minutes (`10m`) or hours (`2h`, or a bare number)"
            ));
        }
    };
    let amount: f64 = match digits.parse::<f64>() {
        Ok(amount) if amount.is_finite() => amount,
        _ => {
            return refuse(format!(
                "GRACE_PERIOD of {name} is `{value}`, not a time (`30s`, `10m`, `2h`, or a number of hours)"
            ));
        }
    };
    if amount == 0.0 {
        return refuse(format!(
            "GRACE_PERIOD of {name} is 0: zero is not allowed for any WEIGHT, LIMIT or GRACE_PERIOD (leave the grace period out instead)"
        ));
    }
    if amount < 0.0 {
        return refuse(format!(
            "GRACE_PERIOD of {name} is {value}: a grace period is positive"
        ));
    }
    let seconds = amount * seconds_per;
    if seconds > 100.0 * 365.0 * 86_400.0 {
        return refuse(format!(
            "GRACE_PERIOD of {name} is {value}: at most 100 years"
        ));
    }
    Ok(Duration::from_millis((seconds * 1000.0).round() as u64))
}

/// A number as APS_PRIORITY writes it (`1`, `0.5`, `-2`).
fn show_number(value: f64) -> String {
    let text = format!("{value}");
    text
}

/// A grace period as APS_PRIORITY writes it (`10h`, `30m`, `45s`).
fn show_grace(grace: Duration) -> String {
    let millis = grace.as_millis();
    if millis % 3_600_000 == 0 {
        format!("{}h", millis / 3_600_000)
    } else if millis % 60_000 == 0 {
        format!("{}m", millis / 60_000)
    } else {
        format!("{}s", grace.as_secs_f64())
    }
}

impl fmt::Display for ApsPriority {
    /// The canonical form: the sections that have entries, in WEIGHT,
    /// LIMIT, GRACE_PERIOD order, terms in [`ApsTerm::ALL`] order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sections = Vec::new();
        for section in [
            ApsSection::Weight,
            ApsSection::Limit,
            ApsSection::GracePeriod,
        ] {
            let entries: Vec<String> = ApsTerm::ALL
                .iter()
                .filter_map(|term| {
                    let index = term.index();
                    let value = match section {
                        ApsSection::Weight => self.weight[index].map(show_number),
                        ApsSection::Limit => self.limit[index].map(show_number),
                        ApsSection::GracePeriod => self.grace[index].map(show_grace),
                    }?;
                    Some(format!("[{}, {value}]", term.name()))
                })
                .collect();
            if !entries.is_empty() {
                sections.push(format!("{}[{}]", section.name(), entries.join(" ")));
            }
        }
        f.write_str(&sections.join(" "))
    }
}

/// APS_PRIORITY resolved for the formula (see [`ApsPriority::resolve`]):
/// by [`ApsTerm::index`], each term's weight (0: not counted), limit
/// (infinite: none) and grace period (zero: none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResolvedAps {
    /// The weights.
    pub weight: [f64; 8],
    /// The limits: the largest absolute value of the weighted term.
    pub limit: [f64; 8],
    /// The grace periods: how long a job pends before the term counts.
    pub grace: [Duration; 8],
}

impl ResolvedAps {
    /// Whether the FS factor counts.
    pub fn counts_fairshare(&self) -> bool {
        self.weight[ApsTerm::Fs.index()] != 0.0
    }
}
