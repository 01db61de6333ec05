//! What a fix saves on HotSpot: the one cost model behind every finding's `share`.
//!
//! The VM counts bytecode instructions and allocated bytes. HotSpot's compiled code runs an
//! instruction far faster than any interpreter and pays per byte to allocate, zero and collect, so
//! neither count alone says where a warmed-up `java` spends its time. The model estimates that
//! time as `ns_per_instruction · instructions + ns_per_byte · bytes`, with both constants fitted
//! by least squares to the scored corpus measured under `java` (main run again and again in one
//! JVM, thread CPU time; `bloatlens-bench --fixes --tsv` writes such runs, docs/benchmarks.md has
//! the fit and how far it is off once the JIT settles). A
//! finding's share is what its fix removes, in that estimate, over the program's own work: the run
//! less the JDK's boot before `main`, which a warmed-up `java` does not pay again.
//!
//! What a fix removes is the finding's [`Work`]: the instructions and bytes of the objects it
//! avoids, the calls it hoists, the copies it cuts (see [`copy_chain`]). Objects HotSpot's escape
//! analysis removes cost nothing there; triage hides those findings rather than price them.

/// Work as the VM counts it: bytecode instructions executed and bytes allocated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    pub instructions: u64,
    pub bytes: u64,
}

impl Work {
    pub const fn new(instructions: u64, bytes: u64) -> Work {
        Work { instructions, bytes }
    }

    /// This work done `times` times.
    pub fn times(self, times: u64) -> Work {
        Work { instructions: self.instructions.saturating_mul(times), bytes: self.bytes.saturating_mul(times) }
    }

    pub fn plus(self, other: Work) -> Work {
        Work {
            instructions: self.instructions.saturating_add(other.instructions),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }

    /// This work less `other` (a run less its boot).
    pub fn minus(self, other: Work) -> Work {
        Work {
            instructions: self.instructions.saturating_sub(other.instructions),
            bytes: self.bytes.saturating_sub(other.bytes),
        }
    }
}

/// HotSpot's price of the VM's counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Compiled code's time per interpreted bytecode instruction.
    pub ns_per_instruction: f64,
    /// Allocation, zeroing and young collection per allocated byte.
    pub ns_per_byte: f64,
}

impl CostModel {
    /// Fitted on the 35 programs of the scored corpus, JDK 17, C2 (thread CPU time, least squares
    /// without intercept: median error 36% per program; docs/benchmarks.md "The cost model").
    pub const HOTSPOT: CostModel = CostModel { ns_per_instruction: 0.034, ns_per_byte: 0.19 };

    /// Estimated time of `work` on a warmed-up HotSpot, in nanoseconds.
    pub fn nanos(&self, work: Work) -> f64 {
        self.ns_per_instruction * work.instructions as f64 + self.ns_per_byte * work.bytes as f64
    }

    /// What removing `saved` saves of `program`, as a share (0–1) of its estimated time.
    pub fn share(&self, saved: Work, program: Work) -> f64 {
        let total = self.nanos(program);
        if total <= 0.0 {
            return 0.0;
        }
        (self.nanos(saved) / total).clamp(0.0, 1.0)
    }
}

/// One heap-to-heap copy: the load, the store and the reference moves around them.
pub const COPY: Work = Work::new(4, 0);

/// A library container or a box a copied value passes through (put in, taken out again), on top of
/// the copies: the call that puts the value there (a map's hash and probe, a list's bounds check),
/// the entry or box it makes, and the call that reads it back out.
pub const THROUGH_CONTAINER: Work = Work::new(40, 24);

/// What cutting a copy chain saves: each of its copies, each run `frequency` times, and the
/// containers it passes through.
pub fn copy_chain(frequency: u64, hops: u64, through_containers: u64) -> Work {
    COPY.times(hops).plus(THROUGH_CONTAINER.times(through_containers)).times(frequency)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_is_saved_time_over_the_program_time() {
        let m = CostModel { ns_per_instruction: 0.5, ns_per_byte: 1.0 };
        // 1,000 instructions and 500 bytes: 500 + 500 ns; removing the bytes saves half.
        assert_eq!(m.share(Work::new(0, 500), Work::new(1_000, 500)), 0.5);
        assert_eq!(m.share(Work::new(1_000, 0), Work::new(1_000, 500)), 0.5);
        assert_eq!(m.share(Work::new(10_000, 0), Work::new(1_000, 500)), 1.0);
        assert_eq!(m.share(Work::new(1, 1), Work::default()), 0.0);
    }

    #[test]
    fn a_copy_chain_through_a_container_costs_the_container() {
        let plain = copy_chain(1_000, 2, 0);
        let boxed = copy_chain(1_000, 2, 1);
        assert_eq!(plain, Work::new(8_000, 0));
        assert_eq!(boxed, Work::new(48_000, 24_000));
    }

    #[test]
    fn the_run_less_its_boot_is_the_program() {
        assert_eq!(Work::new(10, 10).minus(Work::new(4, 20)), Work::new(6, 0));
    }
}
