//! How `portcullis fuzz --jobs N` shares a campaign out among its jobs.

use crate::protocol::Revision;

/// The revisions job `job` of `jobs` draws scripts for. With several jobs,
/// each takes its share and every revision is some job's: a keep-open job
/// starts a process for each revision it draws, which against a server slow
/// to start is most of a short campaign.
pub fn revision_share(revisions: &[Revision], job: usize, jobs: usize) -> Vec<Revision> {
    if jobs >= revisions.len() {
        return revisions.get(job % revisions.len().max(1)).copied().into_iter().collect();
    }
    revisions.iter().copied().skip(job).step_by(jobs).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_gets_a_share_and_every_revision_a_job() {
        let all = Revision::ALL;
        assert_eq!(revision_share(&all, 0, 1), all.to_vec());
        for jobs in 1..=9 {
            let shares: Vec<Vec<Revision>> = (0..jobs).map(|j| revision_share(&all, j, jobs)).collect();
            assert!(shares.iter().all(|s| !s.is_empty()), "{jobs} jobs: {shares:?}");
            for r in all {
                assert!(shares.iter().any(|s| s.contains(&r)), "{jobs} jobs leave {r:?} out: {shares:?}");
            }
            let largest = shares.iter().map(Vec::len).max().unwrap();
            assert!(largest <= all.len().div_ceil(jobs), "{jobs} jobs: {shares:?}");
        }
        assert_eq!(revision_share(&all[1..2], 3, 4), vec![all[1]]);
    }
}
