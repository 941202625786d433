/**
 * How long after its own timeout a zero-data-retention request's row may still be the API's (its
 * answer being sent): its `expires_at` is its timeout plus this, so the expiry path never takes a
 * row its API is still reading.
 */
export const ZDR_GRACE_MS = 120_000;
