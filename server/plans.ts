// Plans are rows of data, not code paths: what a plan changes is read from its row. The keys issue
// moves these rows into the ledger beside organizations; the two shipped plans are seeded from here.
export interface Plan {
  readonly name: string;
  /** Event records per calendar month (America/Los_Angeles), or null for no cap. */
  readonly monthlyRecordLimit: number | null;
  /** Categories whose events never appear in this plan's results (asking for them is a 403). */
  readonly excludedCategories: readonly string[];
  readonly attributionRequired: boolean;
}

export const PLANS: Readonly<Record<string, Plan>> = Object.freeze({
  community: { name: 'community', monthlyRecordLimit: 25, excludedCategories: ['seasonal', 'festivals'], attributionRequired: true },
  partner: { name: 'partner', monthlyRecordLimit: null, excludedCategories: [], attributionRequired: false },
});

/** The keyless demo answers with the Community plan's rules (and its own per-call and per-address limits). */
export const DEMO_PLAN: Plan = PLANS.community!;
