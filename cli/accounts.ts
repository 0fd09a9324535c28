// family-events keys create|list|revoke, usage --org, plans list|set, orgs set-plan: the accounts
// store (LEDGER_DIR/accounts.sqlite) for operators, until the website signs developers up.
// These commands may run while the server does: it notices each change within a second. None of
// them writes the usage ledger, whose only writer is the server's metering thread.
import { Option, type Command } from 'commander';
import type { Plan } from '../workers/protocol.ts';
import { CliError, cliConfig, jsonOption, positiveInt } from './common.ts';

// One @, a dot somewhere after it, no spaces: a typo catcher, not a validator (the mail decides).
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
const PLAN_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

async function stores() {
  const { AccountsDb, UsageDb } = await import('../workers/meter/store.ts');
  const dir = cliConfig().ledgerDir;
  return { accounts: AccountsDb.open(dir), usage: () => UsageDb.openReader(dir) };
}

function print(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
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
    .addOption(jsonOption())
    .action(async (o: { email: string; org: string; plan: string; json?: boolean }, cmd: Command) => {
      if (!EMAIL.test(o.email)) throw new CliError(`--email ${JSON.stringify(o.email)} is not an e-mail address.`);
      const org = o.org.trim();
      if (org === '' || org.length > 200) throw new CliError('--org must be 1 to 200 characters.');
      const { accounts } = await stores();
      try {
        if (!accounts.plans().some((p) => p.name === o.plan)) {
          throw new CliError(`there is no plan ${JSON.stringify(o.plan)}; the plans are ${accounts.plans().map((p) => p.name).join(', ')}.`);
        }
        const existing = accounts.orgByName(org);
        if (existing && existing.plan !== o.plan && cmd.getOptionValueSource('plan') === 'cli') {
          throw new CliError(`organization ${existing.name} (${existing.id}) is on the ${existing.plan} plan; move it with \`family-events orgs set-plan --org ${existing.id} --plan ${o.plan}\`.`);
        }
        const made = accounts.createKey(org, o.email, o.plan);
        print(
          o.json,
          { org_id: made.org.id, key: made.key, plan: made.org.plan },
          [
            `${made.created ? 'created organization' : 'organization'} ${made.org.name} (${made.org.id}) on the ${made.org.plan} plan`,
            `key ${made.keyId}: ${made.key}`,
            'This is the only time the key is shown; store it now.',
          ].join('\n'),
        );
      } finally {
        accounts.close();
      }
    });

  keys
    .command('list')
    .description('List keys (never the keys themselves: id, hint, organization, state, records this month).')
    .option('--org <id>', 'only this organization’s keys')
    .addOption(jsonOption())
    .action(async (o: { org?: string; json?: boolean }) => {
      const { accounts, usage } = await stores();
      const ledger = usage();
      try {
        const month = ledger.byKey(cliConfig().now().getTime());
        const rows = accounts.keys().filter((k) => o.org === undefined || k.org_id === o.org);
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
              ...out.map((k) => [k.id, k.hint, `${k.org_name} (${k.org_id})`, k.email, k.created_at, k.revoked_at ? `revoked ${k.revoked_at}` : 'active', String(k.records_this_month)]),
            ])
          : 'no keys';
        print(o.json, { keys: out }, text);
      } finally {
        ledger.close();
        accounts.close();
      }
    });

  keys
    .command('revoke')
    .description('Revoke a key, by its id (from `keys list`) or the key itself. The server refuses it within a second.')
    .argument('<key>', 'key id (key_…) or the key (bsc_live_…)')
    .addOption(jsonOption())
    .action(async (idOrKey: string, o: { json?: boolean }) => {
      const { accounts } = await stores();
      try {
        const r = accounts.revoke(idOrKey);
        if (!r.found) throw new CliError(`no such key${idOrKey.startsWith('key_') ? ` ${idOrKey}` : ''}; see \`family-events keys list\`.`);
        print(o.json, { id: r.id, revoked: true, already_revoked: !r.revoked }, r.revoked ? `revoked ${r.id}` : `${r.id} was already revoked`);
      } finally {
        accounts.close();
      }
    });

  program
    .command('usage')
    .description('An organization’s usage this month: the same body as GET /v1/usage.')
    .requiredOption('--org <id>', 'organization id (org_…), or its name')
    .addOption(jsonOption())
    .action(async (o: { org: string; json?: boolean }) => {
      const { accounts, usage } = await stores();
      const ledger = usage();
      try {
        const org = accounts.orgById(o.org) ?? accounts.orgByName(o.org);
        if (!org) throw new CliError(`no organization ${JSON.stringify(o.org)}; \`family-events keys list\` shows them.`);
        const plan = accounts.plans().find((p) => p.name === org.plan);
        if (!plan) throw new CliError(`organization ${org.id} is on plan ${org.plan}, which does not exist.`);
        const body = ledger.report(org, plan, cliConfig().now().getTime());
        const r = body.records;
        print(
          o.json,
          body,
          [
            `${body.organization.name} (${body.organization.id}), ${planLine(plan)}`,
            `period ${body.period.start} to ${body.period.end}; resets ${body.period.resets_at}`,
            `records ${r.used} used, ${r.remaining ?? 'unlimited'} remaining of ${r.limit ?? 'unlimited'}; ${body.requests.count} requests`,
            ...body.by_day.filter((d) => d.requests > 0).map((d) => `  ${d.date}  ${String(d.records).padStart(8)} records  ${String(d.requests).padStart(8)} requests`),
          ].join('\n'),
        );
      } finally {
        ledger.close();
        accounts.close();
      }
    });

  const plans = program.command('plans').description('Plans are rows of data: list them, or add or change one.');
  plans
    .command('list')
    .description('List the plans.')
    .addOption(jsonOption())
    .action(async (o: { json?: boolean }) => {
      const { accounts } = await stores();
      try {
        const all = accounts.plans();
        print(o.json, { plans: all.map(planJson) }, all.map(planLine).join('\n'));
      } finally {
        accounts.close();
      }
    });
  plans
    .command('set')
    .description('Add a plan, or change one (organizations on it follow within a second).')
    .argument('<name>', 'plan name: lower-case letters, digits, - and _')
    .requiredOption('--monthly-limit <n|unlimited>', 'event records a month per organization, or unlimited')
    .option('--exclude <slugs>', 'comma-separated category slugs never delivered on this plan', '')
    .option('--attribution', 'attribution required (the default)', true)
    .option('--no-attribution', 'attribution not required')
    .addOption(new Option('--requests-per-minute <n>', 'live requests a minute per key').argParser(positiveInt('--requests-per-minute', 10_000_000)).default(60))
    .addOption(jsonOption())
    .action(async (name: string, o: { monthlyLimit: string; exclude: string; attribution: boolean; requestsPerMinute: number; json?: boolean }) => {
      if (!PLAN_NAME.test(name)) throw new CliError('a plan name is lower-case letters, digits, - and _, starting with a letter (at most 40).');
      const limit = o.monthlyLimit === 'unlimited' ? null : Number(o.monthlyLimit);
      if (limit !== null && !(/^\d{1,9}$/.test(o.monthlyLimit))) throw new CliError('--monthly-limit must be a whole number or "unlimited".');
      const { CATEGORY_SLUGS } = await import('../workers/snapshot/taxonomy.ts');
      const exclude = o.exclude.split(',').map((s) => s.trim()).filter((s) => s !== '');
      const unknown = exclude.filter((s) => !(CATEGORY_SLUGS as readonly string[]).includes(s));
      if (unknown.length) throw new CliError(`--exclude names unknown categories: ${unknown.join(', ')}; the slugs are ${CATEGORY_SLUGS.join(', ')}.`);
      const plan: Plan = { name, monthlyRecordLimit: limit, excludedCategories: [...new Set(exclude)].sort(), attributionRequired: o.attribution, requestsPerMinute: o.requestsPerMinute };
      const { accounts } = await stores();
      try {
        accounts.setPlan(plan);
        print(o.json, planJson(plan), planLine(plan));
      } finally {
        accounts.close();
      }
    });

  const orgs = program.command('orgs').description('Organizations.');
  orgs
    .command('set-plan')
    .description('Move an organization to another plan (this month’s usage carries over).')
    .requiredOption('--org <id>', 'organization id (org_…), or its name')
    .requiredOption('--plan <plan>', 'the plan')
    .addOption(jsonOption())
    .action(async (o: { org: string; plan: string; json?: boolean }) => {
      const { accounts } = await stores();
      try {
        const org = accounts.orgById(o.org) ?? accounts.orgByName(o.org);
        if (!org) throw new CliError(`no organization ${JSON.stringify(o.org)}.`);
        if (!accounts.plans().some((p) => p.name === o.plan)) throw new CliError(`there is no plan ${JSON.stringify(o.plan)}.`);
        accounts.setOrgPlan(org.id, o.plan);
        print(o.json, { org_id: org.id, plan: o.plan }, `${org.name} (${org.id}) is now on the ${o.plan} plan`);
      } finally {
        accounts.close();
      }
    });
}
