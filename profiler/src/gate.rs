//! `--fail-on`: the conditions on a report that fail a CI job (exit status 1): findings of a
//! kind or severity, and with an earlier report, new findings or call paths that got costlier.

use crate::patterns::Pattern;
use crate::report::{Family, Kind, Report, Severity};
use crate::sarif::fingerprints;
use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// A shown finding of at least this severity: `warning`, or `info` (every shown finding).
    Severity(Severity),
    /// A shown finding of this kind (`clone`).
    Kind(Kind),
    /// A shown finding of this family (`copy-chain` takes clones too).
    Family(Family),
    /// A shown finding of this pattern (`leak`).
    Pattern(Pattern),
    /// A shown finding the earlier report did not have (needs `--compare`).
    New,
    /// A call sequence whose cost grew by more than this share of what it was (needs `--compare`).
    Costlier(f64),
}

impl Condition {
    /// Parses `warning,copy-chain,new,costlier:10%`.
    pub fn parse_list(spec: &str) -> Result<Vec<Condition>, String> {
        spec.split(',').map(str::trim).filter(|s| !s.is_empty()).map(Condition::parse).collect()
    }

    fn parse(s: &str) -> Result<Condition, String> {
        if let Some(share) = s.strip_prefix("costlier:") {
            let (number, scale) = match share.strip_suffix('%') {
                Some(p) => (p, 100.0),
                None => (share, 1.0),
            };
            let v: f64 = number
                .parse()
                .map_err(|_| format!("`{s}`: the share is not a number (costlier:10% or costlier:0.1)"))?;
            if !(v / scale).is_finite() || v < 0.0 {
                return Err(format!("`{s}`: the share must be 0 or more"));
            }
            return Ok(Condition::Costlier(v / scale));
        }
        match s {
            "warning" => Ok(Condition::Severity(Severity::Warning)),
            "info" => Ok(Condition::Severity(Severity::Info)),
            "new" => Ok(Condition::New),
            _ => {
                // A family's name is also its kind's (`copy-chain`): the family, which takes more.
                if let Some(f) = Family::parse(s) {
                    Ok(Condition::Family(f))
                } else if let Some(k) = Kind::parse(s) {
                    Ok(Condition::Kind(k))
                } else if let Some(p) = Pattern::parse(s) {
                    Ok(Condition::Pattern(p))
                } else {
                    Err(format!(
                        "unknown --fail-on condition `{s}` (known: warning, info, new, costlier:<share>, the kinds {}, and the patterns of docs/patterns.md)",
                        Kind::ALL.map(Kind::as_str).join(", ")
                    ))
                }
            }
        }
    }

    pub fn needs_previous(&self) -> bool {
        matches!(self, Condition::New | Condition::Costlier(_))
    }
}

/// What tripped the gate, one line per condition met (empty: the job passes).
pub fn check(conditions: &[Condition], report: &Report, previous: Option<&Report>) -> Vec<String> {
    let shown: Vec<usize> = (0..report.findings.len()).filter(|&i| report.findings[i].hidden.is_none()).collect();
    let first = |matching: &[usize]| -> String {
        let f = &report.findings[matching[0]];
        format!(
            "{} finding{} (first: {} at {})",
            matching.len(),
            if matching.len() == 1 { "" } else { "s" },
            f.message,
            f.location.short()
        )
    };
    let mut tripped = Vec::new();
    for c in conditions {
        let line = match c {
            Condition::Severity(s) => {
                let m: Vec<usize> = shown
                    .iter()
                    .copied()
                    .filter(|&i| *s == Severity::Info || report.findings[i].severity == Severity::Warning)
                    .collect();
                (!m.is_empty()).then(|| format!("{}: {}", s.as_str(), first(&m)))
            }
            Condition::Kind(_) | Condition::Family(_) | Condition::Pattern(_) => {
                let m: Vec<usize> = shown
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let f = &report.findings[i];
                        match c {
                            Condition::Kind(k) => f.kind() == *k,
                            Condition::Family(fam) => f.kind().family() == *fam,
                            Condition::Pattern(p) => f.pattern == Some(*p),
                            _ => false,
                        }
                    })
                    .collect();
                let name = match c {
                    Condition::Kind(k) => k.as_str(),
                    Condition::Family(f) => f.as_str(),
                    Condition::Pattern(p) => p.id(),
                    _ => "",
                };
                (!m.is_empty()).then(|| format!("{name}: {}", first(&m)))
            }
            Condition::New => {
                let before: HashSet<String> =
                    previous.map(|p| fingerprints(&p.findings).into_iter().collect()).unwrap_or_default();
                let prints = fingerprints(&report.findings);
                let m: Vec<usize> = shown.iter().copied().filter(|&i| !before.contains(&prints[i])).collect();
                (!m.is_empty()).then(|| format!("new: {}", first(&m)))
            }
            Condition::Costlier(share) => report.comparison.as_ref().and_then(|cmp| {
                let worse = cmp
                    .changes
                    .iter()
                    .filter(|c| c.before > 0 && (c.after - c.before) as f64 > share * c.before as f64)
                    .max_by_key(|c| c.after - c.before)?;
                Some(format!(
                    "costlier: {} went from {} to {} {} (+{:.0}%)",
                    worse.calls.join(" → "),
                    worse.before,
                    worse.after,
                    cmp.metric,
                    100.0 * (worse.after - worse.before) as f64 / worse.before as f64
                ))
            }),
        };
        tripped.extend(line);
    }
    tripped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_parse_and_refuse_what_they_do_not_know() {
        assert_eq!(
            Condition::parse_list("warning, copy-chain,clone,leak,new,costlier:10%").unwrap(),
            vec![
                Condition::Severity(Severity::Warning),
                Condition::Family(Family::CopyChain),
                Condition::Kind(Kind::Clone),
                Condition::Pattern(Pattern::Leak),
                Condition::New,
                Condition::Costlier(0.1)
            ]
        );
        assert_eq!(Condition::parse_list("costlier:0.25").unwrap(), vec![Condition::Costlier(0.25)]);
        assert!(Condition::parse_list("copy").unwrap_err().contains("unknown --fail-on condition `copy`"));
        assert!(Condition::parse_list("costlier:x").is_err());
        assert!(Condition::parse_list("costlier:-5%").is_err());
    }
}
