// sql/*.sql, read once per process. Queries reach DuckDB from these files only.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../server/config.ts';

const cache = new Map<string, string>();

export function sqlFile(name: string): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(path.join(REPO_ROOT, 'sql', `${name}.sql`), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** A SQL string literal for a path the program chose itself (never for request input). */
export function pathLiteral(p: string): string {
  return `'${p.replaceAll("'", "''")}'`;
}
