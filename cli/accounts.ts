// family-events keys create|list|revoke, usage --org, plans list|set, orgs set-plan: the accounts
// store for operators — the shared PostgreSQL ledger when DATABASE_URL is set, else the embedded
// one (LEDGER_DIR/accounts.sqlite) — with the same output on both (cli/ledger-admin.ts).
// These commands may run while the servers do: they notice each change within a second. None of
// them writes usage, which only the servers' metering threads charge.
import { Option, type Command } from 'commander';
import type { LedgerAdmin } from './ledger-admin.ts';
import { LIVE_KEYS_PER_ORG, LiveKeysLimitError } from '../ledger/rules.ts';
import { CliError, cliConfig, jsonOption, positiveInt } from './common.ts';
import type { Plan } from '../ledger/accounts.ts';

// One @, a dot somewhere after it, no spaces: a typo catcher, not a validator (the mail decides).
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
const PLAN_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** Runs `fn` on the configured ledger, closed after (a PostgreSQL pool would keep the process alive). */
async function withLedger<T>(fn: (ledger: LedgerAdmin) => Promise<T>): Promise<T> {
  const { openLedgerAdmin } = await import('./ledger-admin.ts');
  const ledger = await openLedgerAdmin(cliConfig());
  try {
    return await fn(ledger);
  } finally {
    await ledger.close();
  }
}

function print(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A plan as the command line prints it with --json: the field names of the API's JSON. */
const planJson = (p: Plan) => ({
  name: p.name,
  monthly_record_limit: p.monthlyRecordLimit,
  excluded_categories: p.excludedCategories,
  attribution_required: p.attributionRequired,
  requests_per_minute: p.requestsPerMinute,
});

const planLine = (p: Plan): string =>
  `${p.name}: ${p.monthlyRecordLimit ?? 'unlimited'} records a month, excludes ${p.excludedCategories.join(', ') || 'nothing'}, attribution ${p.attributionRequired ? 'required' : 'not required'}, ${p.requestsPerMinute} requests a minute per key`;

export function registerAccountCommands(program: Command): void {
  const keys = program.command('keys').description('API keys: create (and the organization with it), list, revoke.');

  keys
    .command('create')
    .description('Create a key for an organization (created on --plan if new). The key is printed once and stored only as a hash.')
    .requiredOption('--email <email>', 'the developer account creating the key')
    .requiredOption('--org <name>', 'the organization (created if no organization has this name)')
    .option('--plan <plan>', 'plan of a new organization (see `plans list`)', 'community')
    .option('--allow-over-limit', `create the key even when the organization already has ${LIVE_KEYS_PER_ORG} live keys (the limit the website keeps)`)
    .addOption(jsonOption())
    .action(async (o: { email: string; org: string; plan: string; allowOverLimit?: boolean; json?: boolean }, cmd: Command) => {
      if (!EMAIL.test(o.email)) throw new CliError(`--email ${JSON.stringify(o.email)} is not an e-mail address.`);
      const org = o.org.trim();
      if (org === '' || org.length > 200) throw new CliError('--org must be 1 to 200 characters.');
      await withLedger(async (ledger) => {
        const plans = await ledger.plans();
        if (!plans.some((p) => p.name === o.plan)) {
          throw new CliError(`there is no plan ${JSON.stringify(o.plan)}; the plans are ${plans.map((p) => p.name).join(', ')}.`);
        }
        const existing = await ledger.orgByName(org);
        if (existing && existing.plan !== o.plan && cmd.getOptionValueSource('plan') === 'cli') {
          throw new CliError(
            `organization ${existing.name} (${existing.id}) is on the ${existing.plan} plan; move it with \`family-events orgs set-plan --org ${existing.id} --plan ${o.plan}\`.`,
          );
        }
        let made;
        try {
          made = await ledger.createKey(org, o.email, o.plan, o.allowOverLimit ? null : LIVE_KEYS_PER_ORG);
        } catch (err) {
          if (!(err instanceof LiveKeysLimitError)) throw err;
          throw new CliError(
            `organization ${err.orgName} (${err.orgId}) already has ${err.live} live keys (unrevoked, or rolled and still in their grace), and an organization may have ${err.max}: each key has its own request rate. Revoke one it no longer uses (\`family-events keys list --org ${err.orgId}\`, then \`family-events keys revoke <key id>\`), or pass --allow-over-limit to create it anyway.`,
          );
        }
        print(
          o.json,
          { org_id: made.org.id, key: made.key, plan: made.org.plan },
          [
            `${made.created ? 'created organization' : 'organization'} ${made.org.name} (${made.org.id}) on the ${made.org.plan} plan`,
            `key ${made.keyId}: ${made.key}`,
            'This is the only time the key is shown; store it now.',
          ].join('\n'),
        );
      });
    });

  keys
    .command('list')
    .description('List keys (never the keys themselves: id, hint, organization, state, records this month).')
    .option('--org <id>', 'only this organization’s keys')
    .addOption(jsonOption())
    .action(async (o: { org?: string; json?: boolean }) => {
      await withLedger(async (ledger) => {
        const month = await ledger.usageByKey(cliConfig().now().getTime());
        const rows = (await ledger.keys()).filter((k) => o.org === undefined || k.org_id === o.org);
        const out = rows.map((k) => ({
          id: k.id,
          hint: k.hint,
          org_id: k.org_id,
          org_name: k.org_name,
          email: k.email,
          created_at: k.created_at,
          revoked_at: k.revoked_at,
          records_this_month: month.get(k.id)?.records ?? 0,
        }));
        const text = out.length
          ? columns([
              ['id', 'hint', 'organization', 'email', 'created', 'state', 'records this month'],
              ...out.map((k) => [
                k.id,
                k.hint,
                `${k.org_name} (${k.org_id})`,
                k.email,
                k.created_at,
                k.revoked_at ? `revoked ${k.revoked_at}` : 'active',
                String(k.records_this_month),
              ]),
            ])
          : 'no keys';
        print(o.json, { keys: out }, text);
      });
    });

  keys
    .command('revoke')
    .description('Revoke a key, by its id (from `keys list`) or the key itself. The server refuses it within a second.')
    .argument('<key>', 'key id (key_…) or the key (bsc_live_…)')
    .addOption(jsonOption())
    .action(async (idOrKey: string, o: { json?: boolean }) => {
      await withLedger(async (ledger) => {
        const r = await ledger.revoke(idOrKey);
        if (!r.found) throw new CliError(`no such key${idOrKey.startsWith('key_') ? ` ${idOrKey}` : ''}; see \`family-events keys list\`.`);
        print(o.json, { id: r.id, revoked: true, already_revoked: !r.revoked }, r.revoked ? `revoked ${r.id}` : `${r.id} was already revoked`);
      });
    });

  program
    .command('usage')
    .description('An organization’s usage this month: the same body as GET /v1/usage.')
    .requiredOption('--org <id>', 'organization id (org_…), or its name')
    .addOption(jsonOption())
    .action(async (o: { org: string; json?: boolean }) => {
      await withLedger(async (ledger) => {
        const org = (await ledger.orgById(o.org)) ?? (await ledger.orgByName(o.org));
        if (!org) throw new CliError(`no organization ${JSON.stringify(o.org)}; \`family-events keys list\` shows them.`);
        const plan = (await ledger.plans()).find((p) => p.name === org.plan);
        if (!plan) throw new CliError(`organization ${org.id} is on plan ${org.plan}, which does not exist.`);
        const body = await ledger.usageReport(org, plan, cliConfig().now().getTime());
        const r = body.records;
        print(
          o.json,
          body,
          [
            `${body.organization.name} (${body.organization.id}), ${planLine(plan)}`,
            `period ${body.period.start} to ${body.period.end}; resets ${body.period.resets_at}`,
            `records ${r.used} used, ${r.remaining ?? 'unlimited'} remaining of ${r.limit ?? 'unlimited'}; ${body.requests.count} requests`,
            ...body.by_day
              .filter((d) => d.requests > 0)
              .map((d) => `  ${d.date}  ${String(d.records).padStart(8)} records  ${String(d.requests).padStart(8)} requests`),
          ].join('\n'),
        );
      });
    });

  const plans = program.command('plans').description('Plans are rows of data: list them, or add or change one.');
  plans
    .command('list')
    .description('List the plans.')
    .addOption(jsonOption())
    .action(async (o: { json?: boolean }) => {
      await withLedger(async (ledger) => {
        const all = await ledger.plans();
        print(o.json, { plans: all.map(planJson) }, all.map(planLine).join('\n'));
      });
    });
  plans
    .command('set')
    .description('Add a plan, or change one (organizations on it follow within a second).')
    .argument('<name>', 'plan name: lower-case letters, digits, - and _')
    .requiredOption('--monthly-limit <n|unlimited>', 'event records a month per organization, or unlimited')
    .option('--exclude <slugs>', 'comma-separated category slugs never delivered on this plan', '')
    .option('--attribution', 'attribution required (the default)', true)
    .option('--no-attribution', 'attribution not required')
    .addOption(
      new Option('--requests-per-minute <n>', 'live requests a minute per key').argParser(positiveInt('--requests-per-minute', 10_000_000)).default(60),
    )
    .addOption(jsonOption())
    .action(async (name: string, o: { monthlyLimit: string; exclude: string; attribution: boolean; requestsPerMinute: number; json?: boolean }) => {
      if (!PLAN_NAME.test(name)) throw new CliError('a plan name is lower-case letters, digits, - and _, starting with a letter (at most 40).');
      const limit = o.monthlyLimit === 'unlimited' ? null : Number(o.monthlyLimit);
      if (limit !== null && !/^\d{1,9}$/.test(o.monthlyLimit)) throw new CliError('--monthly-limit must be a whole number or "unlimited".');
      const { CATEGORY_SLUGS } = await import('../core/taxonomy.ts');
      const exclude = o.exclude
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      const unknown = exclude.filter((s) => !(CATEGORY_SLUGS as readonly string[]).includes(s));
      if (unknown.length) throw new CliError(`--exclude names unknown categories: ${unknown.join(', ')}; the slugs are ${CATEGORY_SLUGS.join(', ')}.`);
      const plan: Plan = {
        name,
        monthlyRecordLimit: limit,
        excludedCategories: [...new Set(exclude)].sort(),
        attributionRequired: o.attribution,
        requestsPerMinute: o.requestsPerMinute,
      };
      await withLedger(async (ledger) => {
        await ledger.setPlan(plan);
        print(o.json, planJson(plan), planLine(plan));
      });
    });

  const orgs = program.command('orgs').description('Organizations.');
  orgs
    .command('set-plan')
    .description('Move an organization to another plan (this month’s usage carries over).')
    .requiredOption('--org <id>', 'organization id (org_…), or its name')
    .requiredOption('--plan <plan>', 'the plan')
    .addOption(jsonOption())
    .action(async (o: { org: string; plan: string; json?: boolean }) => {
      await withLedger(async (ledger) => {
        const org = (await ledger.orgById(o.org)) ?? (await ledger.orgByName(o.org));
        if (!org) throw new CliError(`no organization ${JSON.stringify(o.org)}.`);
        if (!(await ledger.plans()).some((p) => p.name === o.plan)) throw new CliError(`there is no plan ${JSON.stringify(o.plan)}.`);
        await ledger.setOrgPlan(org.id, o.plan);
        print(o.json, { org_id: org.id, plan: o.plan }, `${org.name} (${org.id}) is now on the ${o.plan} plan`);
      });
    });
}
