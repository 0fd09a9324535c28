// The source registry: a checked-in JSON file listing upstream feeds. Validated at load,
// so a typo in the registry fails the build with the entry and field named.
import { readFile } from 'node:fs/promises';
import * as v from 'valibot';

export const FORMATS = ['ical', 'rss', 'jsonld', 'csv'] as const;
export type FeedFormat = (typeof FORMATS)[number];

const Slug = v.pipe(v.string(), v.regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be a lowercase slug'));
const HttpUrl = v.pipe(v.string(), v.url(), v.regex(/^https?:\/\//, 'must be http(s)'));

export const SourceSchema = v.object({
  id: Slug,
  /** https://…, a local path (relative to the registry file), or sample://KIND for the bundled sample. */
  url: v.pipe(v.string(), v.minLength(1)),
  format: v.picklist(FORMATS),
  organizer: v.object({ name: v.pipe(v.string(), v.minLength(1)), url: HttpUrl }),
  /** Gazetteer venue key used when an event names no place we can resolve. */
  default_venue: v.optional(Slug),
  destination: Slug,
  attribution: v.pipe(v.string(), v.minLength(1)),
  /** Programs of this organizer are free unless an event says otherwise (typical of libraries). */
  free_by_default: v.optional(v.boolean(), false),
  /** CSV only: our field → the upstream column header. Unmapped fields use the usual header names. */
  csv_columns: v.optional(v.record(v.string(), v.string())),
  timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(120_000))),
  max_bytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1024))),
});

export const RegistrySchema = v.pipe(
  v.object({
    sources: v.pipe(v.array(SourceSchema), v.minLength(1)),
    /** Extra places (cities, venues) for these sources, merged over the bundled gazetteer; relative to the registry file. */
    gazetteer: v.optional(v.pipe(v.string(), v.minLength(1))),
  }),
  v.check((r) => new Set(r.sources.map((s) => s.id)).size === r.sources.length, 'source ids must be unique'),
);

export type Source = v.InferOutput<typeof SourceSchema>;
export type Registry = v.InferOutput<typeof RegistrySchema>;

export class RegistryError extends Error {}

export function parseRegistry(json: unknown, where: string): Registry {
  const r = v.safeParse(RegistrySchema, json);
  if (r.success) return r.output;
  const issue = r.issues[0];
  const at = v.getDotPath(issue) ?? '(root)';
  throw new RegistryError(`${where}: ${at}: ${issue.message}`);
}

export async function loadRegistry(file: string): Promise<Registry> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new RegistryError(`${file}: ${(err as Error).message}`);
  }
  return parseRegistry(json, file);
}
