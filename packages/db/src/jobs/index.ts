export { deleteJob, endJob, endJobSql, insertJob, insertJobSql, loadJob, loadTeamJob, markJobCancelled, markJobRunning, setJobWorkflow, shownExpiry, type JobEnd, type JobView, type NewJob } from './rows';
export { deleteExpiredJobs, liveJobsOlderThan, type LiveJob } from './sweep';
