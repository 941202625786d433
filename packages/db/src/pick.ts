import { sql, type SQL } from 'drizzle-orm';

/**
 * `col = ANY(pickOnce(sql\`SELECT … LIMIT n FOR UPDATE SKIP LOCKED\`))`: the way claims choose
 * the rows they update. An ARRAY(...) sub-select is an InitPlan, run exactly once, and the
 * rows are then found by key. The plain form, `UPDATE t … FROM (SELECT … LIMIT n …) pick`,
 * lets the planner put the pick on the inner side of a nested loop (it does when statistics
 * predate the rows) and re-run it per outer row; each re-run skips the rows the statement has
 * already updated and locks the next ones, so one claim took many more than n (claims.test.ts).
 * RETURNING then follows physical order: callers sort.
 */
export function pickOnce(pick: SQL): SQL {
  return sql`ARRAY(${pick})`;
}
