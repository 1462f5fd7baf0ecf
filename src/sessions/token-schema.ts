// The registry's shape of token counts: per model, the four counts of src/usage/tokens.ts. Apart from
// usage.ts so that the journal's events (which carry a turn's tokens) and the usage sums (which apply
// those events) do not import each other.
import { z } from 'zod';

const count = z.number().int().nonnegative();
export const tokensSchema = z.object({ input: count, output: count, cacheRead: count, cacheWrite: count });
export const byModelSchema = z.record(z.string().min(1), tokensSchema);
