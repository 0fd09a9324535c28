// The values the filters accept: /v1/categories (the fixed taxonomy, with this snapshot's counts)
// and /v1/cities (the cities this snapshot has events in). Answers are built once per snapshot.
import * as v from 'valibot';
import { CATEGORY_LABELS, CATEGORY_SLUGS } from '../../core/taxonomy.ts';
import { FixedAnswer } from '../fixed-answer.ts';
import type { LoadedSnapshot } from '../snapshots.ts';
import { defineRoute, type Services } from '../route.ts';
import type { Plan } from '../../ledger/accounts.ts';

const noParams = v.object({});

/** A body rendered once per snapshot and set of plans (plans are data: an operator may add one). */
function perSnapshot(render: (s: LoadedSnapshot, plans: readonly Plan[]) => object): (svc: Services) => FixedAnswer {
  let memo: { id: string; answer: FixedAnswer } | null = null;
  return (svc) => {
    const snap = svc.snapshots.require();
    const plans = svc.meter.plans;
    const id = `${snap.ref.id} ${plans.map((p) => `${p.name}:${p.excludedCategories.join(',')}`).join(' ')}`;
    if (memo?.id !== id) memo = { id, answer: new FixedAnswer(Buffer.from(JSON.stringify(render(snap, plans)))) };
    return memo.answer;
  };
}

const categoriesBody = perSnapshot((s, plans) => ({
  snapshot: s.ref.id,
  categories: CATEGORY_SLUGS.map((slug) => ({
    slug,
    name: CATEGORY_LABELS[slug],
    events: s.manifest.categories[slug] ?? 0,
    excluded_from_plans: plans.filter((p) => p.excludedCategories.includes(slug)).map((p) => p.name),
  })),
}));

const citiesBody = perSnapshot((s) => ({ snapshot: s.ref.id, cities: s.manifest.cities.map((name) => ({ name })) }));

const PUBLIC_CACHE = 'public, max-age=300';

export const categoriesRoute = defineRoute({
  path: '/v1/categories',
  summary: 'Category slugs',
  description: 'Every slug the category filter accepts, with its display name, the number of events in the current snapshot, and the plans that exclude it.',
  tag: 'reference',
  access: 'public',
  params: noParams,
  produces: [{ type: 'application/json', schema: 'CategoryList' }],
  errors: ['unknown_parameter', 'unavailable'],
  handle: (req, _p, svc) => categoriesBody(svc).reply(req.http, PUBLIC_CACHE, '/v1/categories'),
});

export const citiesRoute = defineRoute({
  path: '/v1/cities',
  summary: 'City names',
  description: 'Every city name the city filter accepts: the cities the current snapshot has events in.',
  tag: 'reference',
  access: 'public',
  params: noParams,
  produces: [{ type: 'application/json', schema: 'CityList' }],
  errors: ['unknown_parameter', 'unavailable'],
  handle: (req, _p, svc) => citiesBody(svc).reply(req.http, PUBLIC_CACHE, '/v1/cities'),
});
