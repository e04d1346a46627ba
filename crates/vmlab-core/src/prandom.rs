//! The simulation's random streams. Each source of randomness draws from a stream of its own,
//! derived from the scenario's seed and the source's identity, so that adding a draw in one
//! place (a new process, another file tree, a NIC) leaves every other source's sequence as it
//! was — and one process's accesses are the same sequence under every profile, whatever the
//! kernel threads of that era do meanwhile.

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// Who draws from a stream.
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    /// Interrupts and softirqs: packet arrivals, their CPU, object lifetimes.
    Softirq = 1,
    /// A `[[filetree]]`'s file sizes, indexed by the tree's position in the scenario.
    FileTree = 2,
    /// A scenario process's own choices (random and zipf accesses), indexed by its
    /// definition and copy; forked children and threads take theirs from the parent's.
    Process = 3,
}

/// SplitMix64's finaliser: spreads nearby inputs (seed 1 vs 2, copy 0 vs 1) over the whole
/// 64-bit space before they seed a PCG.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The stream of `who`'s `index`th instance under scenario seed `seed`.
pub fn stream(seed: u64, who: Stream, index: u64) -> Pcg64 {
    Pcg64::seed_from_u64(mix(mix(seed ^ mix(who as u64)) ^ index))
}

/// A child's stream, split from its parent's at the moment of the fork.
pub fn split(parent: &mut Pcg64) -> Pcg64 {
    Pcg64::seed_from_u64(mix(parent.next_u64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_source_index_and_seed() {
        let a = stream(1, Stream::Process, 0).next_u64();
        assert_ne!(a, stream(1, Stream::Process, 1).next_u64());
        assert_ne!(a, stream(1, Stream::FileTree, 0).next_u64());
        assert_ne!(a, stream(2, Stream::Process, 0).next_u64());
        assert_eq!(a, stream(1, Stream::Process, 0).next_u64());
    }

    #[test]
    fn a_split_stream_is_not_its_parents_continuation() {
        let mut p = stream(7, Stream::Process, 0);
        let mut q = p.clone();
        let mut c = split(&mut p);
        q.next_u64();
        assert_ne!(c.next_u64(), q.next_u64());
    }
}
