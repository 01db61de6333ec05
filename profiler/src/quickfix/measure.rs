//! What a fix saved: two reports of the same program, before and after the fix, compared in the
//! unit of a finding's share (the program's estimated time on a warmed-up HotSpot, from its own
//! instructions and allocated bytes), and whether the finding is still there.

use crate::cost_model::Work;
use crate::fixes::{estimated_nanos, saving};
use crate::report::{Finding, Report};

/// The saving measured between two profiles.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Saving {
    /// Of the program's estimated HotSpot time (the unit of a share).
    pub time: f64,
    /// Of the program's instructions.
    pub instructions: f64,
    /// Allocated bytes saved, and their share.
    pub bytes: i64,
    pub bytes_share: f64,
}

impl Saving {
    pub fn between(before: &Report, after: &Report) -> Saving {
        let (b, a) = (program(before), program(after));
        Saving {
            time: saving(estimated_nanos(b), estimated_nanos(a)),
            instructions: saving(b.instructions as f64, a.instructions as f64),
            bytes: b.bytes as i64 - a.bytes as i64,
            bytes_share: saving(b.bytes as f64, a.bytes as f64),
        }
    }

    /// "−23% instructions, −1.2 MB allocated".
    pub fn describe(&self) -> String {
        format!("{} instructions, {} allocated", signed_percent(self.instructions), signed_bytes(self.bytes))
    }
}

/// The program's own work in a report: the run less the JDK's boot.
fn program(r: &Report) -> Work {
    Work::new(r.run.instructions, r.run.allocated_bytes)
        .minus(Work::new(r.run.boot_instructions, r.run.boot_allocated_bytes))
}

/// A saving as `−23%` (fewer), `+4%` (more).
fn signed_percent(saved: f64) -> String {
    let p = (saved * 100.0).round();
    if p > 0.0 {
        format!("−{p}%")
    } else if p < 0.0 {
        format!("+{}%", -p)
    } else {
        "±0%".into()
    }
}

fn signed_bytes(saved: i64) -> String {
    let sign = if saved > 0 {
        "−"
    } else if saved < 0 {
        "+"
    } else {
        "±"
    };
    let b = saved.unsigned_abs() as f64;
    let amount = if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} KB", b / 1e3)
    } else {
        format!("{b} B")
    };
    format!("{sign}{amount}")
}

/// The shown finding of `after` that is `f` again: the same pattern in the same method of the same
/// file, naming the same expression (its line may have moved with the fix).
pub fn same_finding<'a>(f: &Finding, after: &'a Report) -> Option<&'a Finding> {
    after.findings.iter().find(|g| {
        g.hidden.is_none()
            && g.pattern == f.pattern
            && g.location.file == f.location.file
            && g.location.class == f.location.class
            && g.location.method == f.location.method
            && g.location.expression == f.location.expression
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn savings_read_as_changes() {
        assert_eq!(signed_percent(0.234), "−23%");
        assert_eq!(signed_percent(-0.04), "+4%");
        assert_eq!(signed_bytes(1_200_000), "−1.2 MB");
        assert_eq!(signed_bytes(-2_000), "+2 KB");
    }
}
