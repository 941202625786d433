export { deleteJob, endJob, endJobSql, insertJob, insertJobSql, loadJob, loadTeamJob, markJobRunning, setJobWorkflow, type JobEnd, type JobView, type NewJob } from './rows';
export { deleteExpiredJobs, liveJobsOlderThan, type LiveJob } from './sweep';
