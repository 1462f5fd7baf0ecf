// How `jaggers usage` groups turns; apart from ./report.ts so that the CLI's start loads nothing more.
export const USAGE_BY = ['agent', 'job', 'task', 'session', 'day', 'model'] as const;
export type UsageBy = (typeof USAGE_BY)[number];
