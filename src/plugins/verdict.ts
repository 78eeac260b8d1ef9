/**
 * How a check says no. A check hook returns `refuse(reason)` to stop the
 * operation; the user sees the reason with the plugin's name. Throwing is a
 * failure (a bug or an outage), not a refusal.
 */

export interface Refusal {
  readonly refused: true;
  readonly reason: string;
}

/** What a check hook returns: nothing to let the operation go on, a refusal to stop it. */
export type Verdict = Refusal | undefined | void;

export function refuse(reason: string): Refusal {
  return { refused: true, reason };
}

export function isRefusal(value: unknown): value is Refusal {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { refused?: unknown }).refused === true &&
    typeof (value as { reason?: unknown }).reason === 'string'
  );
}
